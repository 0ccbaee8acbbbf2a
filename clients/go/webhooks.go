package viewfinder

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader is the header of a webhook delivery that carries its signature.
const SignatureHeader = "Viewfinder-Signature"

// DefaultTolerance is how far a delivery's signing time may be from now, either way, before it is
// refused as a replay.
const DefaultTolerance = 300 * time.Second

// ErrInvalidSignature is the error of a delivery whose signature does not verify: a missing or
// malformed header, another secret, a changed body, or a signing time outside the tolerance.
var ErrInvalidSignature = errors.New("viewfinder: invalid webhook signature")

// WebhookEvent is the body of a webhook delivery: the outcome of an asynchronous capture.
type WebhookEvent struct {
	ID string `json:"id"`
	// Event is "capture.succeeded" or "capture.failed".
	Event      string        `json:"event"`
	Status     CaptureStatus `json:"status"`
	CreatedAt  string        `json:"createdAt"`
	FinishedAt string        `json:"finishedAt"`
	Attempts   int           `json:"attempts"`
	// Metadata describes the image of a succeeded capture (nil when it failed).
	Metadata *CaptureMetadata `json:"metadata"`
	// Error is why a capture failed.
	Error *string `json:"error"`
	// ImageURL is where to read the image with your key (CaptureService.GetImage); nil when failed.
	ImageURL *string `json:"imageUrl"`
	// Storage is where the image was written, for a capture submitted with storage; nil otherwise.
	Storage   *StoredObject `json:"storage"`
	StatusURL string        `json:"statusUrl"`
}

// CaptureMetadata is a succeeded capture's answer without the image.
type CaptureMetadata struct {
	URL              string  `json:"url"`
	Quality          Quality `json:"quality"`
	Format           Format  `json:"format"`
	Width            int     `json:"width"`
	Height           int     `json:"height"`
	FileSize         int     `json:"fileSize"`
	ProcessingTimeMs int     `json:"processingTimeMs"`
	WaitMs           int     `json:"waitMs"`
	Truncated        bool    `json:"truncated"`
	SiteID           string  `json:"site_id"`
}

// WebhookOption changes how a delivery is verified.
type WebhookOption func(*webhookCheck)

type webhookCheck struct {
	tolerance time.Duration
	now       time.Time
}

// WithTolerance sets how far the signing time may be from now, either way (DefaultTolerance).
func WithTolerance(d time.Duration) WebhookOption { return func(w *webhookCheck) { w.tolerance = d } }

// WithNow verifies as of this time instead of the clock's (for tests and replays of old deliveries).
func WithNow(t time.Time) WebhookOption { return func(w *webhookCheck) { w.now = t } }

// VerifyWebhookSignature checks a delivery's Viewfinder-Signature header ("t=<unix seconds>,
// v1=<hex HMAC-SHA256 of "<t>.<raw body>">", several v1 while a secret rotates) against the raw
// body, in constant time, and that t is within the tolerance of now. It returns nil or an error
// that errors.Is ErrInvalidSignature.
func VerifyWebhookSignature(payload []byte, header, secret string, opts ...WebhookOption) error {
	check := webhookCheck{tolerance: DefaultTolerance, now: time.Now()}
	for _, opt := range opts {
		opt(&check)
	}
	var timestamp string
	var signatures []string
	for _, item := range strings.Split(header, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(item), "=")
		if name == "" || value == "" {
			continue
		}
		switch name {
		case "t":
			if timestamp == "" {
				timestamp = value
			}
		case "v1":
			signatures = append(signatures, value)
		}
	}
	t, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no timestamp", ErrInvalidSignature)
	}
	if age := check.now.Unix() - t; age > int64(check.tolerance/time.Second) || -age > int64(check.tolerance/time.Second) {
		return fmt.Errorf("%w: signed %d s from now, beyond the tolerance of %s", ErrInvalidSignature, age, check.tolerance)
	}
	if len(signatures) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrInvalidSignature)
	}
	expected := webhookMAC(secret, t, payload)
	for _, candidate := range signatures {
		if given, err := hex.DecodeString(candidate); err == nil && hmac.Equal(given, expected) {
			return nil
		}
	}
	return fmt.Errorf("%w: no signature matches", ErrInvalidSignature)
}

// ConstructWebhookEvent verifies a delivery (see VerifyWebhookSignature) and decodes its event.
// Give it the raw body, as read, before any JSON parsing.
func ConstructWebhookEvent(payload []byte, header, secret string, opts ...WebhookOption) (*WebhookEvent, error) {
	if err := VerifyWebhookSignature(payload, header, secret, opts...); err != nil {
		return nil, err
	}
	var event WebhookEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return nil, fmt.Errorf("viewfinder: webhook body: %w", err)
	}
	return &event, nil
}

// SignWebhook is the Viewfinder-Signature header the service would send for this body at time t:
// for tests of your receiver.
func SignWebhook(payload []byte, secret string, t time.Time) string {
	return fmt.Sprintf("t=%d,v1=%s", t.Unix(), hex.EncodeToString(webhookMAC(secret, t.Unix(), payload)))
}

func webhookMAC(secret string, t int64, payload []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "%d.", t)
	mac.Write(payload)
	return mac.Sum(nil)
}
