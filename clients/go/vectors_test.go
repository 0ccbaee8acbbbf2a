package viewfinder_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

// The shared vectors of clients/vectors/: every library, and the server, must agree with them byte
// for byte.

func readVectors(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "clients", "vectors", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatal(err)
	}
}

func TestRenderLinkVectors(t *testing.T) {
	var file struct {
		Vectors []struct {
			Name, Origin, KeyID, SigningSecret, SignedQuery, Signature, Link string
			Expires                                                          *int64
			Options                                                          [][2]string
		}
	}
	readVectors(t, "render-links.json", &file)
	if len(file.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range file.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			params := make([]viewfinder.LinkParam, len(v.Options))
			for i, o := range v.Options {
				params[i] = viewfinder.LinkParam{Name: o[0], Value: o[1]}
			}
			var expires time.Time
			if v.Expires != nil {
				expires = time.Unix(*v.Expires, 0)
			}
			link := viewfinder.SignRenderLink(v.Origin, viewfinder.LinkKey{ID: v.KeyID, SigningSecret: v.SigningSecret}, params, expires)
			if link != v.Link {
				t.Errorf("link\n got %s\nwant %s", link, v.Link)
			}
			if got := viewfinder.RenderLinkSignature(v.SignedQuery, v.SigningSecret); got != v.Signature {
				t.Errorf("signature %s, want %s", got, v.Signature)
			}
			if !strings.Contains(link, "?"+v.SignedQuery+"&signature=") {
				t.Errorf("the link does not hold the signed query %s", v.SignedQuery)
			}
		})
	}
}

func TestWebhookVectors(t *testing.T) {
	var file struct {
		Sign []struct {
			Name, Secret, Body, Header string
			Timestamp                  int64
		}
		Verify []struct {
			Name, Secret, Header, Body string
			Now, ToleranceSeconds      int64
			Valid                      bool
		}
	}
	readVectors(t, "webhooks.json", &file)
	if len(file.Sign) == 0 || len(file.Verify) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range file.Sign {
		t.Run("sign: "+v.Name, func(t *testing.T) {
			if got := viewfinder.SignWebhook([]byte(v.Body), v.Secret, time.Unix(v.Timestamp, 0)); got != v.Header {
				t.Errorf("got %s, want %s", got, v.Header)
			}
		})
	}
	for _, v := range file.Verify {
		t.Run("verify: "+v.Name, func(t *testing.T) {
			err := viewfinder.VerifyWebhookSignature([]byte(v.Body), v.Header, v.Secret,
				viewfinder.WithNow(time.Unix(v.Now, 0)), viewfinder.WithTolerance(time.Duration(v.ToleranceSeconds)*time.Second))
			if v.Valid && err != nil {
				t.Errorf("refused a valid delivery: %v", err)
			}
			if !v.Valid && !errors.Is(err, viewfinder.ErrInvalidSignature) {
				t.Errorf("want ErrInvalidSignature, got %v", err)
			}
		})
	}
}
