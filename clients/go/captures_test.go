package viewfinder_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

func TestSelfHostedCapture(t *testing.T) {
	client := selfHostedClient()
	ctx := ctxFor(t, 3*time.Minute)

	shot, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !shot.Success || !isPNG(shot.Image) || shot.MediaType != "image/png" || shot.Width != 1280 || shot.Height != 720 || shot.FileSize != len(shot.Image) {
		t.Errorf("unexpected answer: success %v, %s, %dx%d, %d bytes (fileSize %d)", shot.Success, shot.MediaType, shot.Width, shot.Height, len(shot.Image), shot.FileSize)
	}

	img, err := client.Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, Format: viewfinder.FormatJPEG, ImageQuality: 70, RemoveAds: viewfinder.Bool(false)})
	if err != nil {
		t.Fatalf("CreateImage: %v", err)
	}
	if img.ContentType != "image/jpeg" || len(img.Data) < 3 || string(img.Data[:3]) != "\xff\xd8\xff" || img.Width != 1280 {
		t.Errorf("unexpected image: %s, %d bytes, width %d", img.ContentType, len(img.Data), img.Width)
	}
}

func TestHostedCaptureWithFullAccessKeyAndSiteID(t *testing.T) {
	site := newSite(t, "go-full-access")
	client := hostedClient()
	ctx := ctxFor(t, 3*time.Minute)
	shot, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID, Quality: viewfinder.QualityMobile})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !isPNG(shot.Image) || shot.SiteID != site.ID || shot.Width != 750 {
		t.Errorf("unexpected answer: site %s, width %d", shot.SiteID, shot.Width)
	}
	img, err := client.Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID})
	if err != nil {
		t.Fatalf("CreateImage: %v", err)
	}
	if !isPNG(img.Data) || img.ContentType != "image/png" || img.Headers["Viewfinder-Site-Id"] != site.ID {
		t.Errorf("unexpected image: %s, headers %v", img.ContentType, img.Headers)
	}
	// Without site_id a full-access key is refused, with the server's message.
	_, err = client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	var apiErr *viewfinder.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Message != "site_id is required with a full-access API key" {
		t.Errorf("want the 400 naming site_id, got %v", err)
	}
}

func TestHostedCaptureWithSiteKey(t *testing.T) {
	site, key := newSiteKey(t, "go-site-key")
	client := viewfinder.NewClient(service.Hosted.Base, key.Secret)
	ctx := ctxFor(t, 3*time.Minute)
	shot, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	if err != nil {
		t.Fatalf("Create with a site key: %v", err)
	}
	if !isPNG(shot.Image) || shot.SiteID != site.ID {
		t.Errorf("unexpected answer: site %q", shot.SiteID)
	}
	img, err := client.Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page})
	if err != nil || !isPNG(img.Data) {
		t.Fatalf("CreateImage with a site key: %v", err)
	}
	// A site key may not use the management API.
	if _, err := client.Sites.List(ctx); !errors.Is(err, viewfinder.ErrPermission) {
		t.Errorf("Sites.List with a site key: want ErrPermission, got %v", err)
	}
}

func TestAsyncCaptures(t *testing.T) {
	site := newSite(t, "go-async")
	client := hostedClient()
	ctx := ctxFor(t, 4*time.Minute)

	accepted, err := client.Captures.Submit(ctx, &viewfinder.SubmitParams{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID}})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if !strings.HasPrefix(accepted.ID, "job_") || accepted.StatusURL == "" {
		t.Errorf("unexpected answer %+v", accepted)
	}
	// Poll by hand once: a fresh capture is queued, running or already done.
	status, err := client.Captures.Get(ctx, accepted.ID)
	if err != nil || status.ID != accepted.ID {
		t.Fatalf("Get: %+v, %v", status, err)
	}
	done, err := client.Captures.Wait(ctx, accepted.ID, &viewfinder.WaitOptions{PollInterval: 200 * time.Millisecond, Timeout: 3 * time.Minute})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if done.Status != viewfinder.CaptureSucceeded || done.Result == nil || !isPNG(done.Result.Image) {
		t.Fatalf("capture ended %s (%v)", done.Status, done.LastError)
	}
	img, err := client.Captures.GetImage(ctx, accepted.ID, "")
	if err != nil || !isPNG(img.Data) {
		t.Fatalf("GetImage: %v", err)
	}

	// An idempotency key of our own answers the same capture twice.
	params := &viewfinder.SubmitParams{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID}, IdempotencyKey: "go-" + accepted.ID}
	first, err := client.Captures.Submit(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.Captures.Submit(ctx, params)
	if err != nil || again.ID != first.ID {
		t.Errorf("the same idempotency key made %s and %s (%v)", first.ID, again.ID, err)
	}

	batch, err := client.Captures.SubmitBatch(ctx, []*viewfinder.SubmitParams{
		{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID}},
		{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page + "?second", SiteID: site.ID, Format: viewfinder.FormatWebP}},
	})
	if err != nil || len(batch) != 2 || batch[0].ID == batch[1].ID {
		t.Fatalf("SubmitBatch: %+v, %v", batch, err)
	}
	for _, b := range batch {
		c, err := client.Captures.Wait(ctx, b.ID, &viewfinder.WaitOptions{PollInterval: 200 * time.Millisecond})
		if err != nil || c.Status != viewfinder.CaptureSucceeded {
			t.Errorf("batch capture %s: %v %v", b.ID, c, err)
		}
	}
	webp, err := client.Captures.GetImage(ctx, batch[1].ID, viewfinder.FormatWebP)
	if err != nil || webp.ContentType != "image/webp" {
		t.Errorf("GetImage webp: %v %v", webp, err)
	}

	// A batch is checked as a whole: one bad capture refuses it, with the server's message.
	_, err = client.Captures.SubmitBatch(ctx, []*viewfinder.SubmitParams{
		{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID}},
		{CaptureOptions: viewfinder.CaptureOptions{SiteID: site.ID}},
	})
	var apiErr *viewfinder.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "captures[1]") {
		t.Errorf("want a 400 naming captures[1], got %v", err)
	}
}

func TestAsyncWaitIsBounded(t *testing.T) {
	site := newSite(t, "go-async-bound")
	client := hostedClient()
	ctx := ctxFor(t, 2*time.Minute)
	accepted, err := client.Captures.Submit(ctx, &viewfinder.SubmitParams{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Slow + "?ms=6000", SiteID: site.ID}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Captures.Wait(ctx, accepted.ID, &viewfinder.WaitOptions{PollInterval: 100 * time.Millisecond, Timeout: 500 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the bound to pass first (context.DeadlineExceeded), got %v (capture %+v)", err, c)
	}
	// The image of a capture not done is a 409.
	if _, err := client.Captures.GetImage(ctx, accepted.ID, ""); err != nil && !errors.Is(err, viewfinder.ErrConflict) {
		t.Errorf("GetImage of a pending capture: want ErrConflict, got %v", err)
	}
}

func TestSelfHostedAsyncCapture(t *testing.T) {
	client := selfHostedClient()
	ctx := ctxFor(t, 3*time.Minute)
	accepted, err := client.Captures.Submit(ctx, &viewfinder.SubmitParams{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page}})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if !strings.Contains(accepted.StatusURL, "/captures/") {
		t.Errorf("statusUrl %s", accepted.StatusURL)
	}
	done, err := client.Captures.Wait(ctx, accepted.ID, &viewfinder.WaitOptions{PollInterval: 200 * time.Millisecond})
	if err != nil || done.Status != viewfinder.CaptureSucceeded || !isPNG(done.Result.Image) {
		t.Fatalf("Wait: %+v %v", done, err)
	}
}

func TestRenderLinkFetchedFromTheService(t *testing.T) {
	site, siteKey := newSiteKey(t, "go-links")
	ctx := ctxFor(t, 3*time.Minute)
	links := []struct {
		name string
		key  viewfinder.LinkKey
		opts viewfinder.CaptureOptions
	}{
		{"full-access key with site_id", viewfinder.LinkKey{ID: service.Hosted.KeyID, SigningSecret: service.Hosted.SigningSecret},
			viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID, HideSelectors: []string{"h1", ".ad"}, RemoveAds: viewfinder.Bool(false)}},
		{"site key", viewfinder.LinkKey{ID: siteKey.ID, SigningSecret: siteKey.SigningSecret},
			viewfinder.CaptureOptions{URL: service.Pages.Page + "?q=a b~*", Format: viewfinder.FormatJPEG, ImageQuality: 60, CacheTTL: 60}},
	}
	for _, l := range links {
		t.Run(l.name, func(t *testing.T) {
			link, err := hostedClient().RenderLinks.Sign(l.key, &l.opts, time.Now().Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(link, service.Hosted.Key) || strings.Contains(link, l.key.SigningSecret) {
				t.Fatal("the link holds a secret")
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			want := l.opts.Format.MediaType()
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != want {
				t.Fatalf("GET %s: %d %s %s", link, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
		})
	}
	// A link changed after signing is refused: the signature covers every parameter.
	link, _ := hostedClient().RenderLinks.Sign(links[1].key, &links[1].opts, time.Time{})
	res, err := http.Get(strings.Replace(link, "imageQuality=60", "imageQuality=61", 1))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 401 {
		t.Errorf("a tampered link answered %d, want 401", res.StatusCode)
	}
	// Credentials never go into a link.
	if _, err := viewfinder.LinkParams(&viewfinder.CaptureOptions{URL: "https://example.com/", Credentials: viewfinder.Credentials{Cookies: []viewfinder.Cookie{{Name: "a", Value: "b"}}}}); !errors.Is(err, viewfinder.ErrNotLinkable) {
		t.Errorf("want ErrNotLinkable, got %v", err)
	}
}

func TestLinkParamsOrderAndEncoding(t *testing.T) {
	params, err := viewfinder.LinkParams(&viewfinder.CaptureOptions{
		URL: "https://example.com/", Quality: viewfinder.QualityRetina, FullPage: true, RemoveAds: viewfinder.Bool(false), Format: viewfinder.FormatPDF,
		PDF:           &viewfinder.PDFOptions{Paper: "Letter", Margin: &viewfinder.PDFMargin{Top: "1cm"}},
		HideSelectors: []string{".a", ".b"}, VisitOptions: viewfinder.VisitOptions{Locale: "fr-FR", Geolocation: &viewfinder.Geolocation{Latitude: 48.85, Longitude: 2.35}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(params)
	want := `[{"Name":"url","Value":"https://example.com/"},{"Name":"quality","Value":"retina"},{"Name":"fullPage","Value":"true"},{"Name":"removeAds","Value":"false"},{"Name":"format","Value":"pdf"},{"Name":"pdf.paper","Value":"Letter"},{"Name":"pdf.margin.top","Value":"1cm"},{"Name":"hideSelectors","Value":".a"},{"Name":"hideSelectors","Value":".b"},{"Name":"locale","Value":"fr-FR"},{"Name":"geolocation.latitude","Value":"48.85"},{"Name":"geolocation.longitude","Value":"2.35"}]`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// The page report and checks judged against it, on a synchronous capture; refused where the answer
// cannot carry it.
func TestCaptureWithReportAndChecks(t *testing.T) {
	client := selfHostedClient()
	ctx := ctxFor(t, 3*time.Minute)
	shot, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, Report: &viewfinder.ReportOptions{
		Checks: &viewfinder.Checks{
			Status:           []int{200},
			MaxConsoleErrors: &viewfinder.CountCheck{Max: 0},
			WebVitals:        &viewfinder.VitalChecks{CLS: viewfinder.VitalMax(0.25), TTFB: viewfinder.VitalNeedsImprovement},
			Text:             []viewfinder.TextCheck{{Contains: "Hello from the client tests"}, {Selector: "h1", NotContains: "Goodbye"}, {Contains: "a sentence the page does not have"}},
		},
	}})
	if err != nil {
		t.Fatalf("Create with a report: %v", err)
	}
	r := shot.Report
	if r == nil || r.Document.Status == nil || *r.Document.Status != 200 || r.Vitals.CLS.Unit != "score" || r.Weight.Requests < 1 || r.Timeline.Total < 1 {
		t.Fatalf("unexpected report %+v", r)
	}
	if r.Checks == nil || !r.Checks.Failing || len(r.Checks.Failures) != 1 || r.Checks.Failures[0].Check != "text[2].contains" || !slices.Contains(r.Checks.Passed, "status") {
		t.Errorf("unexpected verdict %+v", r.Checks)
	}
	// report: true is a zero ReportOptions.
	plain, err := client.Captures.Create(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, Report: &viewfinder.ReportOptions{}})
	if err != nil || plain.Report == nil || plain.Report.Checks != nil {
		t.Errorf("report: true: %+v, %v", plain, err)
	}

	var apiErr *viewfinder.Error
	_, err = client.Captures.Submit(ctx, &viewfinder.SubmitParams{CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, Report: &viewfinder.ReportOptions{}}})
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || !strings.Contains(apiErr.Message, "report cannot be asked of") {
		t.Errorf("Submit with a report: want the service's 400, got %v", err)
	}
	if _, err := client.Captures.CreateImage(ctx, &viewfinder.CaptureOptions{URL: service.Pages.Page, Report: &viewfinder.ReportOptions{}}); !errors.As(err, &apiErr) || apiErr.Status != 406 {
		t.Errorf("CreateImage with a report: want the service's 406, got %v", err)
	}
	if _, err := viewfinder.LinkParams(&viewfinder.CaptureOptions{URL: service.Pages.Page, Report: &viewfinder.ReportOptions{}}); !errors.Is(err, viewfinder.ErrNotLinkable) {
		t.Errorf("LinkParams with a report: want ErrNotLinkable, got %v", err)
	}
}
