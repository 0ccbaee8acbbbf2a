package viewfinder

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// RenderPath is the path of render links on the service.
const RenderPath = "/api/render"

// LinkParam is one query parameter of a render link. The order of a link's parameters is part of
// what is signed.
type LinkParam struct{ Name, Value string }

// LinkKey is the key that signs render links: its id (key_…, which the link names) and its signing
// secret (vfs_…, shown once when the key is created or regenerated). The link never holds the key.
type LinkKey struct {
	ID            string
	SigningSecret string
}

// String hides the signing secret.
func (k LinkKey) String() string { return fmt.Sprintf("{%s [redacted]}", k.ID) }

// GoString is String, for %#v.
func (k LinkKey) GoString() string { return k.String() }

// SignRenderLink builds a signed render link (docs/render-links.md), byte for byte as the server
// checks it: origin + /api/render?<params, then key and expires, form-encoded as the WHATWG
// URLSearchParams serializer does>&signature=<hex HMAC-SHA256 of that query with the signing
// secret>. A zero expires makes a link that never expires; after expires the link answers 403.
func SignRenderLink(origin string, key LinkKey, params []LinkParam, expires time.Time) string {
	var query strings.Builder
	add := func(name, value string) {
		if query.Len() > 0 {
			query.WriteByte('&')
		}
		query.WriteString(formEncode(name))
		query.WriteByte('=')
		query.WriteString(formEncode(value))
	}
	for _, p := range params {
		add(p.Name, p.Value)
	}
	add("key", key.ID)
	if !expires.IsZero() {
		add("expires", strconv.FormatInt(expires.Unix(), 10))
	}
	signed := query.String()
	return strings.TrimRight(origin, "/") + RenderPath + "?" + signed + "&signature=" + RenderLinkSignature(signed, key.SigningSecret)
}

// RenderLinkSignature is the lower-case hex HMAC-SHA256 of a link's query (before &signature=).
func RenderLinkSignature(signedQuery, signingSecret string) string {
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte(signedQuery))
	return hex.EncodeToString(mac.Sum(nil))
}

// formEncode is application/x-www-form-urlencoded as URLSearchParams writes it: A-Z a-z 0-9 * - . _
// as they are, space as +, every other byte of the UTF-8 as %XX in upper case. (Go's
// url.QueryEscape differs: it leaves ~ alone and encodes *.)
func formEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '*', c == '-', c == '.', c == '_':
			b.WriteByte(c)
		case c == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// ErrNotLinkable is the error of LinkParams for options that cannot ride in a render link:
// headers, cookies and authorization (a link is seen by every browser, proxy and log it passes),
// and report (a link answers the image alone).
var ErrNotLinkable = errors.New("viewfinder: this option cannot ride in a render link")

// LinkParams turns capture options into a render link's parameters, in the order of
// CaptureOptions' fields (url first): booleans as true or false, numbers in decimal, lists repeated
// once per item, objects' fields named with dots (pdf.margin.top). Zero values are left out.
func LinkParams(opts *CaptureOptions) ([]LinkParam, error) {
	if opts == nil {
		return nil, nil
	}
	if len(opts.Headers) > 0 || len(opts.Cookies) > 0 || opts.Authorization != nil {
		return nil, fmt.Errorf("%w: headers, cookies and authorization would be seen by every browser, proxy and log the link passes through", ErrNotLinkable)
	}
	if opts.Report != nil {
		return nil, fmt.Errorf("%w: report is answered in JSON beside the image, by Captures.Create", ErrNotLinkable)
	}
	var params []LinkParam
	flatten("", reflect.ValueOf(*opts), &params)
	return params, nil
}

func flatten(prefix string, v reflect.Value, out *[]LinkParam) {
	t := v.Type()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		field := v.Field(i)
		if t.Field(i).Anonymous && name == "" { // VisitOptions: its fields are the options' own
			flatten(prefix, field, out)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		if field.IsZero() {
			continue
		}
		if field.Kind() == reflect.Pointer {
			field = field.Elem()
		}
		name = prefix + name
		switch field.Kind() {
		case reflect.Struct:
			flatten(name+".", field, out)
		case reflect.Slice:
			for j := range field.Len() {
				*out = append(*out, LinkParam{name, scalar(field.Index(j))})
			}
		case reflect.Map: // headers: refused by LinkParams before
		default:
			*out = append(*out, LinkParam{name, scalar(field)})
		}
	}
}

func scalar(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	default:
		return v.String()
	}
}

// RenderLinkService signs render links on the client's base URL.
type RenderLinkService struct{ c *Client }

// Sign builds a signed link of these capture options on the client's base URL (see
// SignRenderLink, LinkParams). A zero expires makes a link that never expires.
func (s *RenderLinkService) Sign(key LinkKey, opts *CaptureOptions, expires time.Time) (string, error) {
	params, err := LinkParams(opts)
	if err != nil {
		return "", err
	}
	return SignRenderLink(s.c.baseURL, key, params, expires), nil
}
