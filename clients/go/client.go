package viewfinder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Version is this library's version; it is part of the User-Agent it sends.
const Version = "0.1.0"

const (
	// DefaultTimeout bounds one attempt of a request. A capture may take the service up to 53 s
	// (CAPTURE_TIMEOUT_MS), time queued included.
	DefaultTimeout = 70 * time.Second
	// DefaultMaxRetries is how many times a 429, a 503 (or 502, 504), or a connection that failed
	// before an answer is tried again.
	DefaultMaxRetries = 2
	// DefaultMaxRetryDelay caps one wait between attempts, Retry-After included.
	DefaultMaxRetryDelay = 30 * time.Second
)

// Client calls one Viewfinder service. Make it with NewClient; it is safe for concurrent use.
type Client struct {
	// Captures: synchronous and asynchronous captures.
	Captures *CaptureService
	// RenderLinks: signed render links on this client's base URL.
	RenderLinks *RenderLinkService
	// Sites, Keys, Monitors and Usage: the hosted management API (a full-access key).
	Sites *SiteService
	// Destinations are the account's storage destinations (hosted mode, a full-access key).
	Destinations *DestinationService
	Keys         *KeyService
	Monitors     *MonitorService
	Usage        *UsageService

	baseURL       string
	key           string
	selfHosted    bool
	httpClient    *http.Client
	timeout       time.Duration
	maxRetries    int
	maxRetryDelay time.Duration
	retryBase     time.Duration
	userAgent     string
}

// Option configures a Client.
type Option func(*Client)

// WithSelfHosted talks to a self-hosted service (MODE=self-hosted): captures go to /screenshot and
// /captures, and the key is the service's API_KEY. Without it the client talks to a hosted service
// (/api/screenshot, /api/captures and the management API).
func WithSelfHosted() Option { return func(c *Client) { c.selfHosted = true } }

// WithHTTPClient sends the requests with this http.Client (a proxy, custom TLS, a test transport).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.httpClient = h } }

// WithTimeout bounds each attempt of a request (DefaultTimeout); the context bounds the whole call.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithMaxRetries sets how many times a request is tried again after a 429, a 502, 503 or 504, or a
// connection error (DefaultMaxRetries). 0 turns retries off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = max(0, n) } }

// WithMaxRetryDelay caps one wait between two attempts (DefaultMaxRetryDelay). A Retry-After
// longer than that, or beyond the context's deadline, is not waited for: the 429 is returned.
func WithMaxRetryDelay(d time.Duration) Option { return func(c *Client) { c.maxRetryDelay = d } }

// WithAppInfo adds "name/version" of your application to the User-Agent.
func WithAppInfo(name, version string) Option {
	return func(c *Client) { c.userAgent += " " + name + "/" + version }
}

// NewClient makes a client of the service at baseURL (e.g. "https://viewfinder.example.com"; a
// path prefix is kept) with an API key, sent as X-API-Key. In hosted mode it is an account's key;
// with WithSelfHosted, the service's API_KEY (or "" when the service has none).
func NewClient(baseURL, key string, opts ...Option) *Client {
	c := &Client{
		baseURL:       strings.TrimRight(baseURL, "/"),
		key:           key,
		httpClient:    http.DefaultClient,
		timeout:       DefaultTimeout,
		maxRetries:    DefaultMaxRetries,
		maxRetryDelay: DefaultMaxRetryDelay,
		retryBase:     500 * time.Millisecond,
		userAgent:     UserAgent(),
	}
	for _, opt := range opts {
		opt(c)
	}
	c.Captures = &CaptureService{c}
	c.RenderLinks = &RenderLinkService{c}
	c.Sites = &SiteService{c}
	c.Destinations = &DestinationService{c}
	c.Keys = &KeyService{c}
	c.Monitors = &MonitorService{c}
	c.Usage = &UsageService{c}
	return c
}

// UserAgent is the User-Agent this library sends: "viewfinder-go/0.1.0 (go1.26.8; linux/amd64)".
func UserAgent() string {
	return fmt.Sprintf("viewfinder-go/%s (%s; %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// BaseURL is the service's address the client was made with.
func (c *Client) BaseURL() string { return c.baseURL }

// String describes the client without its key, so that printing it never leaks the key.
func (c Client) String() string {
	mode := "hosted"
	if c.selfHosted {
		mode = "self-hosted"
	}
	return fmt.Sprintf("viewfinder.Client{%s %s, key: [redacted]}", mode, c.baseURL)
}

// GoString is String, for %#v.
func (c Client) GoString() string { return c.String() }

// Format prints String for every verb, %+v and %#v included.
func (c Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// request is one call: what to send and what an answer must be read as.
type request struct {
	method, path string
	body         any
	accept       string
	header       http.Header
	// idempotent: sending it twice does what sending it once does, so a request that got no
	// answer may be sent again.
	idempotent bool
}

// response is a successful answer, read whole.
type response struct {
	header http.Header
	body   []byte
}

// do sends the request, retrying as the policy allows, and answers the 2xx response or an error.
func (c *Client) do(ctx context.Context, r request) (*response, error) {
	var payload []byte
	if r.body != nil {
		var err error
		if payload, err = json.Marshal(r.body); err != nil {
			return nil, fmt.Errorf("viewfinder: %s %s: encoding the body: %w", r.method, r.path, err)
		}
	}
	target := c.baseURL + r.path
	for attempt := 0; ; attempt++ {
		res, err := c.attempt(ctx, r, target, payload)
		if err == nil {
			return res, nil
		}
		wait, retry := c.retryable(r, err, attempt)
		if !retry {
			return nil, err
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return nil, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("viewfinder: %s %s: %w (while waiting to retry after %v)", r.method, r.path, ctx.Err(), err)
		case <-timer.C:
		}
	}
}

// retryable decides whether an attempt's error is worth another attempt, and after how long.
func (c *Client) retryable(r request, err error, attempt int) (time.Duration, bool) {
	if attempt >= c.maxRetries {
		return 0, false
	}
	backoff := c.retryBase << attempt
	backoff = backoff/2 + rand.N(backoff/2+1) // jitter: half to all of the step
	var apiErr *Error
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		default:
			return 0, false // a 4xx will not change by asking again; a 500 is the capture's own failure
		}
		if apiErr.RetryAfter > 0 {
			backoff = apiErr.RetryAfter
		}
		if backoff > c.maxRetryDelay {
			return 0, false
		}
		return backoff, true
	}
	var sendErr *transportError
	if errors.As(err, &sendErr) && r.idempotent && !sendErr.contextDone {
		return min(backoff, c.maxRetryDelay), true
	}
	return 0, false
}

// transportError is a request that got no answer (a refused connection, a reset, a timeout).
type transportError struct {
	method, path string
	err          error
	contextDone  bool
}

func (e *transportError) Error() string {
	return fmt.Sprintf("viewfinder: %s %s: %v", e.method, e.path, e.err)
}
func (e *transportError) Unwrap() error { return e.err }

func (c *Client) attempt(ctx context.Context, r request, target string, payload []byte) (*response, error) {
	attemptCtx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(attemptCtx, r.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("viewfinder: %s %s: %w", r.method, r.path, err)
	}
	c.setHeaders(req, r, payload != nil)
	res, err := c.httpClient.Do(req)
	if err != nil {
		return nil, c.sendError(ctx, attemptCtx, r, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, c.sendError(ctx, attemptCtx, r, err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return nil, errorFromResponse(r.method, r.path, res, data, c.key)
	}
	return &response{header: res.Header, body: data}, nil
}

// sendError names a failed exchange: the caller's context (cancelled, deadline), this attempt's
// timeout (context.DeadlineExceeded too), or the network. net/http's own text holds the URL, which
// never holds the key (it goes in a header).
func (c *Client) sendError(ctx, attemptCtx context.Context, r request, err error) error {
	if ctx.Err() != nil {
		return &transportError{method: r.method, path: r.path, err: ctx.Err(), contextDone: true}
	}
	if attemptCtx.Err() != nil {
		return &transportError{method: r.method, path: r.path, err: fmt.Errorf("no answer within the client's timeout (%s): %w", c.timeout, context.DeadlineExceeded)}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return &transportError{method: r.method, path: r.path, err: errors.New(redact(err.Error(), c.key))}
}

func (c *Client) setHeaders(req *http.Request, r request, hasBody bool) {
	for name, values := range r.header {
		req.Header[name] = values
	}
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	req.Header.Set("User-Agent", c.userAgent)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	} else {
		req.Header.Set("Accept", "application/json")
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
}

// call is a request whose answer is JSON, decoded into out (nil: the answer is dropped).
func (c *Client) call(ctx context.Context, r request, out any) error {
	res, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(res.body, out); err != nil {
		return fmt.Errorf("viewfinder: %s %s: reading the answer: %w", r.method, r.path, err)
	}
	return nil
}

// parseRetryAfter reads Retry-After as seconds or as an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(value string, now time.Time) time.Duration {
	if value == "" {
		return 0
	}
	if seconds, err := strconv.Atoi(strings.TrimSpace(value)); err == nil && seconds >= 0 {
		return time.Duration(seconds) * time.Second
	}
	if when, err := http.ParseTime(value); err == nil && when.After(now) {
		return when.Sub(now)
	}
	return 0
}

// Bool, Int and Float return pointers, for the optional fields whose zero value means something
// (RemoveAds: false, Threshold: 0).
func Bool(v bool) *bool { return &v }

// Int returns a pointer to v.
func Int(v int) *int { return &v }

// Float returns a pointer to v.
func Float(v float64) *float64 { return &v }

// String returns a pointer to v.
func String(v string) *string { return &v }

// pathOf joins escaped path segments under a prefix: pathOf("/api/sites", id).
func pathOf(prefix string, segments ...string) string {
	for _, s := range segments {
		prefix += "/" + url.PathEscape(s)
	}
	return prefix
}
