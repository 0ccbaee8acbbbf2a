package viewfinder_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

func TestTypedErrors(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	const wrongKey = "vf_this-is-not-a-key-of-this-service-0123456789"

	_, err := viewfinder.NewClient(service.Hosted.Base, wrongKey).Sites.List(ctx)
	var apiErr *viewfinder.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message != "Invalid API key" || !viewfinder.IsAuthentication(err) || !errors.Is(err, viewfinder.ErrAuthentication) {
		t.Errorf("wrong key: want a 401 Invalid API key, got %#v", err)
	}
	if _, err := selfHostedClient().Captures.Create(ctx, &viewfinder.CaptureOptions{}); !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Message != "URL is required" || !viewfinder.IsInvalidRequest(err) {
		t.Errorf("no url: want the 400 URL is required, got %v", err)
	}
	if _, err := selfHostedClient().Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, FullPage: true, Selector: "h1"}); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Message, "fullPage and selector cannot be combined") {
		t.Errorf("fullPage with selector: want the server's message, got %v", err)
	}
	if _, err := hostedClient().Sites.Get(ctx, "site_000000000000000000000000"); !errors.As(err, &apiErr) || apiErr.Status != 404 || !viewfinder.IsNotFound(err) || apiErr.Message == "" {
		t.Errorf("unknown site: want a 404 with a message, got %v", err)
	}
	if errors.Is(err, viewfinder.ErrRateLimited) {
		t.Error("a 404 is not a rate limit")
	}
}

// No credential in any error text, nor in what a client or an issued key prints.
func TestNoCredentialInErrorsOrPrints(t *testing.T) {
	ctx := ctxFor(t, time.Minute)
	secretKey := "vf_secret-key-that-must-never-show-0123456789ab"
	client := viewfinder.NewClient(service.Hosted.Base, secretKey)
	_, err401 := client.Sites.List(ctx)
	// A connection refused: a port nothing listens on.
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, errNet := viewfinder.NewClient(closed.URL, secretKey, viewfinder.WithMaxRetries(0)).Usage.Get(ctx)
	issued := viewfinder.IssuedKey{Key: viewfinder.Key{ID: "key_1"}, Secret: secretKey, SigningSecret: "vfs_signing-secret-never-shown"}
	link := viewfinder.LinkKey{ID: "key_1", SigningSecret: "vfs_signing-secret-never-shown"}
	// A monitor page's named values (its journey's password).
	pageValues := viewfinder.MonitorPageCredentials{Values: map[string]string{"password": secretKey}}
	for _, text := range []string{
		fmt.Sprint(err401), fmt.Sprintf("%+v %#v", err401, err401), fmt.Sprint(errNet), fmt.Sprintf("%#v", errNet),
		fmt.Sprint(client), fmt.Sprintf("%v %+v %#v %s", client, client, client, client), fmt.Sprintf("%+v", *client.Captures),
		fmt.Sprintf("%+v", *client), fmt.Sprintf("%#v", *client),
		fmt.Sprint(issued), fmt.Sprintf("%v %+v %#v %#v", issued, link, issued, link),
		fmt.Sprintf("%+v %#v", viewfinder.CaptureOptions{Credentials: viewfinder.Credentials{Authorization: &viewfinder.Authorization{Type: "bearer", Token: secretKey}}}, &viewfinder.Authorization{Type: "basic", Password: secretKey}),
		fmt.Sprintf("%v %+v %#v", pageValues, pageValues, pageValues),
	} {
		if strings.Contains(text, secretKey) || strings.Contains(text, "vfs_signing-secret-never-shown") {
			t.Errorf("a secret shows in %q", text)
		}
	}
	if errNet == nil || err401 == nil {
		t.Fatalf("want errors, got %v and %v", err401, errNet)
	}
}

// The busy service has one render slot and no queue: a capture sent while another runs there is
// answered 429 with Retry-After. With retries the client waits and gets its capture; without, the
// rate-limit error carries the Retry-After. The capture that holds the slot is of a page this test
// serves itself, which answers only once the retrying client has met its first 429.
func TestRetriesA429FromTheService(t *testing.T) {
	ctx := ctxFor(t, 4*time.Minute)
	busy := func(opts ...viewfinder.Option) *viewfinder.Client {
		return viewfinder.NewClient(service.Busy.Base, "", append([]viewfinder.Option{viewfinder.WithSelfHosted(), viewfinder.WithMaxRetryDelay(2 * time.Minute)}, opts...)...)
	}
	loading, release := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	releaseSlot := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseSlot()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		once.Do(func() { close(loading) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "<!doctype html><title>held</title><h1>The page that held the slot</h1>")
	}))
	defer page.Close()

	slowDone := make(chan error, 1)
	go func() {
		// Retries here too: a capture of an earlier test may still hold the slot.
		_, err := busy(viewfinder.WithMaxRetries(20)).Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: page.URL + "/"})
		slowDone <- err
	}()
	select {
	case <-loading: // Chromium is loading the page: the slot is taken until it is released.
	case err := <-slowDone:
		t.Fatalf("the capture that should hold the slot ended: %v", err)
	case <-ctx.Done():
		t.Fatal("the busy service never loaded the page")
	}

	// Without retries: the rate-limit error, with the Retry-After.
	_, err := busy(viewfinder.WithMaxRetries(0)).Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	var limited *viewfinder.Error
	if !viewfinder.IsRateLimited(err) || !errors.As(err, &limited) || limited.Status != 429 || limited.RetryAfter <= 0 || limited.Message == "" {
		t.Fatalf("want a 429 with Retry-After, got %v", err)
	}

	// With retries: a 429, then (the slot released) the capture.
	transport := &countingTransport{onStatus: func(status int) {
		if status == http.StatusTooManyRequests {
			releaseSlot()
		}
	}}
	img, err := busy(viewfinder.WithMaxRetries(20), viewfinder.WithHTTPClient(&http.Client{Transport: transport})).Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	if err != nil || !isPNG(img.Data) {
		t.Fatalf("with retries: %v (answers %v)", err, transport.statuses)
	}
	if len(transport.statuses) < 2 || transport.statuses[0] != 429 || transport.statuses[len(transport.statuses)-1] != 200 {
		t.Errorf("want 429 first and 200 last, got %v", transport.statuses)
	}
	if err := <-slowDone; err != nil {
		t.Errorf("the capture that held the slot: %v", err)
	}
}

func TestNoRetryOnA400(t *testing.T) {
	transport := &countingTransport{}
	client := selfHostedClient(viewfinder.WithMaxRetries(5), viewfinder.WithHTTPClient(&http.Client{Transport: transport}))
	_, err := client.Captures.Create(ctxFor(t, time.Minute), &viewfinder.CaptureOptions{URL: "not a url"})
	if !viewfinder.IsInvalidRequest(err) || len(transport.statuses) != 1 {
		t.Errorf("want one 400, got %v after %v", err, transport.statuses)
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	slow := &viewfinder.CaptureOptions{URL: service.Pages.Slow + "?ms=5000"}
	// The client's per-attempt timeout.
	_, err := selfHostedClient(viewfinder.WithTimeout(300*time.Millisecond)).Captures.Create(ctxFor(t, time.Minute), slow)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WithTimeout: want context.DeadlineExceeded, got %v", err)
	}
	// The context's deadline.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	_, err = selfHostedClient().Captures.Create(ctx, slow)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: want context.DeadlineExceeded, got %v", err)
	}
	// Cancellation.
	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(300*time.Millisecond, cancel)
	_, err = selfHostedClient().Captures.Create(ctx, slow)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: want context.Canceled, got %v", err)
	}
}

// A tiny server of the test's own sees what the client sends, and answers 503 with Retry-After first.
func TestHeadersAndRetryAfterOn503(t *testing.T) {
	var mu sync.Mutex
	var seen []*http.Request
	var calls atomic.Int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(503)
			fmt.Fprint(w, `{"success":false,"error":"Service unavailable: no renderer is ready"}`)
			return
		}
		fmt.Fprint(w, `{"sites":[]}`)
	}))
	defer server.Close()
	client := viewfinder.NewClient(server.URL+"/", "vf_header-test", viewfinder.WithAppInfo("shop", "1.2"))
	if _, err := client.Sites.List(ctxFor(t, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("want a retry after the 503, got %d requests", len(seen))
	}
	r := seen[1]
	if ua := r.Header.Get("User-Agent"); ua != viewfinder.UserAgent()+" shop/1.2" || !strings.HasPrefix(ua, "viewfinder-go/"+viewfinder.Version+" (go") {
		t.Errorf("User-Agent %q", ua)
	}
	if r.Header.Get("X-API-Key") != "vf_header-test" || r.URL.Path != "/api/sites" || r.Header.Get("Accept") != "application/json" {
		t.Errorf("request %s %v", r.URL, r.Header)
	}

	// A Retry-After beyond the context's deadline is not waited for: the 503 comes back at once.
	calls.Store(0)
	seen = nil
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if _, err := client.Sites.List(ctx); !errors.Is(err, viewfinder.ErrAPI) || len(seen) != 1 {
		t.Errorf("want the 503 without waiting, got %v after %d requests", err, len(seen))
	}
}
