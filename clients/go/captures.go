package viewfinder

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CaptureService makes captures: synchronous (Create, CreateImage) and asynchronous (Submit,
// SubmitBatch, Get, GetImage, Wait). In hosted mode they go to /api/screenshot and /api/captures,
// in self-hosted mode (WithSelfHosted) to /screenshot and /captures.
type CaptureService struct{ c *Client }

func (s *CaptureService) screenshotPath() string {
	if s.c.selfHosted {
		return "/screenshot"
	}
	return "/api/screenshot"
}

func (s *CaptureService) capturesPath() string {
	if s.c.selfHosted {
		return "/captures"
	}
	return "/api/captures"
}

// Create captures a page and answers the JSON result, the image decoded into Screenshot.Image.
func (s *CaptureService) Create(ctx context.Context, opts *CaptureOptions) (*Screenshot, error) {
	var shot Screenshot
	if err := s.c.call(ctx, request{method: http.MethodPost, path: s.screenshotPath(), body: opts}, &shot); err != nil {
		return nil, err
	}
	return &shot, nil
}

// CreateImage captures a page and answers the image (or PDF) bytes themselves, in the format of
// opts.Format (PNG by default): lighter than the JSON answer's base64.
func (s *CaptureService) CreateImage(ctx context.Context, opts *CaptureOptions) (*Image, error) {
	res, err := s.c.do(ctx, request{method: http.MethodPost, path: s.screenshotPath(), body: opts, accept: formatOf(opts).MediaType()})
	if err != nil {
		return nil, err
	}
	return imageOf(res), nil
}

func formatOf(opts *CaptureOptions) Format {
	if opts == nil || opts.Format == "" {
		return FormatPNG
	}
	return opts.Format
}

func imageOf(res *response) *Image {
	img := &Image{Data: res.body, ContentType: res.header.Get("Content-Type"), Headers: map[string]string{}}
	for name, values := range res.header {
		if strings.HasPrefix(name, "Viewfinder-") && len(values) > 0 {
			img.Headers[name] = values[0]
		}
	}
	img.Width, _ = strconv.Atoi(res.header.Get("Viewfinder-Width"))
	img.Height, _ = strconv.Atoi(res.header.Get("Viewfinder-Height"))
	return img
}

// Submit queues an asynchronous capture and answers once the service holds it durably (202).
// Without an IdempotencyKey the client makes one, so that a retry never makes a second capture.
func (s *CaptureService) Submit(ctx context.Context, params *SubmitParams) (*AcceptedCapture, error) {
	header := http.Header{}
	if params == nil || params.IdempotencyKey == "" {
		header.Set("Idempotency-Key", newIdempotencyKey())
	}
	var accepted AcceptedCapture
	err := s.c.call(ctx, request{method: http.MethodPost, path: s.capturesPath(), body: params, header: header, idempotent: true}, &accepted)
	if err != nil {
		return nil, err
	}
	return &accepted, nil
}

// SubmitBatch queues 1 to 100 captures at once; the answer has one AcceptedCapture per capture, in
// order. The batch is checked as a whole: when one is refused, none is queued.
func (s *CaptureService) SubmitBatch(ctx context.Context, captures []*SubmitParams) ([]AcceptedCapture, error) {
	// Captures without a key of their own get "<header>:<index>" from the service.
	header := http.Header{"Idempotency-Key": {newIdempotencyKey()}}
	body := struct {
		Captures []*SubmitParams `json:"captures"`
	}{captures}
	var answer struct {
		Captures []AcceptedCapture `json:"captures"`
	}
	if err := s.c.call(ctx, request{method: http.MethodPost, path: s.capturesPath(), body: body, header: header, idempotent: true}, &answer); err != nil {
		return nil, err
	}
	return answer.Captures, nil
}

// Get reads an asynchronous capture's status, with its result once it succeeded.
func (s *CaptureService) Get(ctx context.Context, id string) (*Capture, error) {
	var capture Capture
	if err := s.c.call(ctx, request{method: http.MethodGet, path: pathOf(s.capturesPath(), id), idempotent: true}, &capture); err != nil {
		return nil, err
	}
	return &capture, nil
}

// GetImage reads a succeeded capture's image itself. format is the capture's format ("" for PNG);
// a capture that has not succeeded (yet) is a 409 (ErrConflict).
func (s *CaptureService) GetImage(ctx context.Context, id string, format Format) (*Image, error) {
	if format == "" {
		format = FormatPNG
	}
	res, err := s.c.do(ctx, request{method: http.MethodGet, path: pathOf(s.capturesPath(), id), accept: format.MediaType(), idempotent: true})
	if err != nil {
		return nil, err
	}
	return imageOf(res), nil
}

// WaitOptions bound Wait.
type WaitOptions struct {
	// PollInterval is the time between two reads of the status (1 s).
	PollInterval time.Duration
	// Timeout bounds the wait (2 minutes); the context's own deadline also does.
	Timeout time.Duration
}

// Wait polls a capture until it succeeds or fails, and answers it in that final state (a failed
// capture is not an error: see Capture.Status and LastError). When the bound passes first, the
// error wraps context.DeadlineExceeded.
func (s *CaptureService) Wait(ctx context.Context, id string, opts *WaitOptions) (*Capture, error) {
	interval, timeout := time.Second, 2*time.Minute
	if opts != nil && opts.PollInterval > 0 {
		interval = opts.PollInterval
	}
	if opts != nil && opts.Timeout > 0 {
		timeout = opts.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		capture, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if capture.Status.Done() {
			return capture, nil
		}
		select {
		case <-ctx.Done():
			return capture, fmt.Errorf("viewfinder: waiting for capture %s (still %s): %w", id, capture.Status, ctx.Err())
		case <-time.After(interval):
		}
	}
}

func newIdempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "vf-go-" + hex.EncodeToString(b)
}
