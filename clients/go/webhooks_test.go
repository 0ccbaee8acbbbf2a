package viewfinder_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viewfinder/viewfinder/clients/go"
)

type delivery struct {
	Headers map[string]any `json:"headers"`
	Body    string         `json:"body"`
}

// deliveriesFor reads back what the page server's /hook was sent for this capture.
func deliveriesFor(t *testing.T, captureID string) []delivery {
	t.Helper()
	res, err := http.Get(service.Pages.Hooks)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var hooks struct{ Deliveries []delivery }
	if err := json.NewDecoder(res.Body).Decode(&hooks); err != nil {
		t.Fatal(err)
	}
	var mine []delivery
	for _, d := range hooks.Deliveries {
		if strings.Contains(d.Body, captureID) {
			mine = append(mine, d)
		}
	}
	return mine
}

// A webhook the service delivered, verified by the library; and the same delivery tampered with, refused.
func TestWebhookDeliveredByTheServiceIsVerified(t *testing.T) {
	site := newSite(t, "go-webhooks")
	client := hostedClient()
	ctx := ctxFor(t, 3*time.Minute)
	accepted, err := client.Captures.Submit(ctx, &viewfinder.SubmitParams{
		CaptureOptions: viewfinder.CaptureOptions{URL: service.Pages.Page, SiteID: site.ID},
		WebhookURL:     service.Pages.Hook,
	})
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if _, err := client.Captures.Wait(ctx, accepted.ID, &viewfinder.WaitOptions{PollInterval: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var got []delivery
	for got = deliveriesFor(t, accepted.ID); len(got) == 0; got = deliveriesFor(t, accepted.ID) {
		select {
		case <-ctx.Done():
			t.Fatal("no webhook delivery arrived")
		case <-time.After(200 * time.Millisecond):
		}
	}
	d := got[0]
	header, _ := d.Headers["viewfinder-signature"].(string)
	// The full-access key submitted it: its signing secret signs the webhook.
	event, err := viewfinder.ConstructWebhookEvent([]byte(d.Body), header, service.Hosted.SigningSecret)
	if err != nil {
		t.Fatalf("the service's delivery did not verify: %v", err)
	}
	if event.ID != accepted.ID || event.Event != "capture.succeeded" || event.Status != viewfinder.CaptureSucceeded || event.Metadata == nil || event.Metadata.SiteID != site.ID || event.ImageURL == nil {
		t.Errorf("unexpected event %+v", event)
	}
	if img, err := client.Captures.GetImage(ctx, event.ID, event.Metadata.Format); err != nil || !isPNG(img.Data) {
		t.Errorf("the event's image: %v", err)
	}

	tampered := strings.Replace(d.Body, `"succeeded"`, `"failed"`, 1)
	if _, err := viewfinder.ConstructWebhookEvent([]byte(tampered), header, service.Hosted.SigningSecret); !errors.Is(err, viewfinder.ErrInvalidSignature) {
		t.Errorf("a tampered body: want ErrInvalidSignature, got %v", err)
	}
	if _, err := viewfinder.ConstructWebhookEvent([]byte(d.Body), header, "vfs_another_secret"); !errors.Is(err, viewfinder.ErrInvalidSignature) {
		t.Errorf("another secret: want ErrInvalidSignature, got %v", err)
	}
	// A replay an hour later is refused by the tolerance.
	if _, err := viewfinder.ConstructWebhookEvent([]byte(d.Body), header, service.Hosted.SigningSecret, viewfinder.WithNow(time.Now().Add(time.Hour))); !errors.Is(err, viewfinder.ErrInvalidSignature) {
		t.Errorf("a replay: want ErrInvalidSignature, got %v", err)
	}
}

// A capture with storage answers where the image went instead of the image (docs/storage.md):
// Image stays nil and Storage names the object.
func TestScreenshotWrittenToStorageHasNoImage(t *testing.T) {
	answer := `{"success":true,"url":"https://example.com","quality":"standard","width":1280,"height":720,"fileSize":20481,"processingTimeMs":912,"waitMs":500,` +
		`"storage":{"destination":"archive","bucket":"acme-shots","key":"shots/2026-11-28/cap_5e0c.png","url":"http://127.0.0.1:9000/acme-shots/shots/2026-11-28/cap_5e0c.png"}}`
	var shot viewfinder.Screenshot
	if err := json.Unmarshal([]byte(answer), &shot); err != nil {
		t.Fatal(err)
	}
	if shot.Image != nil || shot.MediaType != "" {
		t.Fatalf("Image = %v, MediaType = %q; want nil and empty", shot.Image, shot.MediaType)
	}
	if shot.Storage == nil || shot.Storage.Bucket != "acme-shots" || shot.Storage.Key != "shots/2026-11-28/cap_5e0c.png" {
		t.Fatalf("Storage = %+v", shot.Storage)
	}
	var destination viewfinder.Destination
	if err := json.Unmarshal([]byte(`{"name":"archive","managedBy":{"kind":"Site","namespace":"shop","name":"storefront","uid":"u1"}}`), &destination); err != nil {
		t.Fatal(err)
	}
	if destination.ManagedBy == nil || destination.ManagedBy.Name != "storefront" {
		t.Fatalf("ManagedBy = %+v", destination.ManagedBy)
	}
}
