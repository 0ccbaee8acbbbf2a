package viewfinder

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// The hosted management API (docs/hosted.md, "Management API"): every call needs a full-access
// key; a site key gets 403 (ErrPermission). None of its lists is paginated: each answers the
// account's whole list.

// SiteService manages the account's sites.
type SiteService struct{ c *Client }

// List answers every site of the account.
func (s *SiteService) List(ctx context.Context) ([]Site, error) {
	return listIn[Site](ctx, s.c, "/api/sites", "sites")
}

// Create makes a site.
func (s *SiteService) Create(ctx context.Context, params *SiteCreateParams) (*Site, error) {
	return callFor[Site](ctx, s.c, request{method: http.MethodPost, path: "/api/sites", body: params})
}

// Get reads a site.
func (s *SiteService) Get(ctx context.Context, id string) (*Site, error) {
	return callFor[Site](ctx, s.c, request{method: http.MethodGet, path: pathOf("/api/sites", id), idempotent: true})
}

// Update changes a site's name or allowed domains; keys apply the new domains from their next request.
func (s *SiteService) Update(ctx context.Context, id string, params *SiteUpdateParams) (*Site, error) {
	return callFor[Site](ctx, s.c, request{method: http.MethodPatch, path: pathOf("/api/sites", id), body: params})
}

// Delete deletes a site and the keys scoped to it.
func (s *SiteService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: pathOf("/api/sites", id), idempotent: true}, nil)
}

// DestinationService manages the account's storage destinations (docs/storage.md): buckets
// captures can be written to, registered once; their credentials are never answered.
type DestinationService struct{ c *Client }

// List answers every destination of the account, by name.
func (s *DestinationService) List(ctx context.Context) ([]Destination, error) {
	return listIn[Destination](ctx, s.c, "/api/destinations", "destinations")
}

// Create registers a bucket; the endpoint must pass the service's network guard.
func (s *DestinationService) Create(ctx context.Context, params *DestinationCreateParams) (*Destination, error) {
	return callFor[Destination](ctx, s.c, request{method: http.MethodPost, path: "/api/destinations", body: params})
}

// Get reads a destination by name.
func (s *DestinationService) Get(ctx context.Context, name string) (*Destination, error) {
	return callFor[Destination](ctx, s.c, request{method: http.MethodGet, path: pathOf("/api/destinations", name), idempotent: true})
}

// Update changes a destination, or replaces its credentials.
func (s *DestinationService) Update(ctx context.Context, name string, params *DestinationUpdateParams) (*Destination, error) {
	return callFor[Destination](ctx, s.c, request{method: http.MethodPatch, path: pathOf("/api/destinations", name), body: params})
}

// Delete removes a destination, not the objects written to it.
func (s *DestinationService) Delete(ctx context.Context, name string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: pathOf("/api/destinations", name), idempotent: true}, nil)
}

// KeyService manages the account's API keys.
type KeyService struct{ c *Client }

// List answers every key of the account, never their secrets.
func (s *KeyService) List(ctx context.Context) ([]Key, error) {
	return listIn[Key](ctx, s.c, "/api/keys", "keys")
}

// Create makes a key: the answer holds the key and its signing secret, this once.
func (s *KeyService) Create(ctx context.Context, params *KeyCreateParams) (*IssuedKey, error) {
	return callFor[IssuedKey](ctx, s.c, request{method: http.MethodPost, path: "/api/keys", body: params})
}

// Regenerate replaces a key and its signing secret; the old ones stop working at once.
func (s *KeyService) Regenerate(ctx context.Context, id string) (*IssuedKey, error) {
	return callFor[IssuedKey](ctx, s.c, request{method: http.MethodPost, path: pathOf("/api/keys", id, "regenerate")})
}

// Delete deletes a key; it stops working at once.
func (s *KeyService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: pathOf("/api/keys", id), idempotent: true}, nil)
}

// UsageService reads the account's usage.
type UsageService struct{ c *Client }

// Get answers captures, failures and image bytes per site, key and monitor.
func (s *UsageService) Get(ctx context.Context) (*Usage, error) {
	return callFor[Usage](ctx, s.c, request{method: http.MethodGet, path: "/api/usage", idempotent: true})
}

// MonitorService manages page monitors (docs/monitors.md).
type MonitorService struct{ c *Client }

// List answers the account's monitors, oldest first.
func (s *MonitorService) List(ctx context.Context) ([]Monitor, error) {
	var monitors []Monitor
	err := s.c.call(ctx, request{method: http.MethodGet, path: "/api/monitors", idempotent: true}, &monitors)
	return monitors, err
}

// Create makes a monitor.
func (s *MonitorService) Create(ctx context.Context, params *MonitorParams) (*Monitor, error) {
	return callFor[Monitor](ctx, s.c, request{method: http.MethodPost, path: "/api/monitors", body: params})
}

// Get reads a monitor, with its next run and its baselines.
func (s *MonitorService) Get(ctx context.Context, id string) (*Monitor, error) {
	return callFor[Monitor](ctx, s.c, request{method: http.MethodGet, path: pathOf("/api/monitors", id), idempotent: true})
}

// Update changes a monitor.
func (s *MonitorService) Update(ctx context.Context, id string, params *MonitorUpdateParams) (*Monitor, error) {
	return callFor[Monitor](ctx, s.c, request{method: http.MethodPatch, path: pathOf("/api/monitors", id), body: params})
}

// Delete deletes a monitor with its runs and pictures.
func (s *MonitorService) Delete(ctx context.Context, id string) error {
	return s.c.call(ctx, request{method: http.MethodDelete, path: pathOf("/api/monitors", id), idempotent: true}, nil)
}

// RunNow queues a run outside the schedule and answers its job id; while one is pending, the same
// id (a retried call makes one run).
func (s *MonitorService) RunNow(ctx context.Context, id string) (string, error) {
	var answer struct {
		JobID string `json:"jobId"`
	}
	err := s.c.call(ctx, request{method: http.MethodPost, path: pathOf("/api/monitors", id, "runs"), idempotent: true}, &answer)
	return answer.JobID, err
}

// Runs answers the monitor's runs, newest first (at most its historyLimit).
func (s *MonitorService) Runs(ctx context.Context, id string) ([]MonitorRun, error) {
	var runs []MonitorRun
	err := s.c.call(ctx, request{method: http.MethodGet, path: pathOf("/api/monitors", id, "runs"), idempotent: true}, &runs)
	return runs, err
}

// GetRun answers one run, each page with the report of its visit and the verdict of its checks.
func (s *MonitorService) GetRun(ctx context.Context, id, runID string) (*MonitorRunWithReports, error) {
	return callFor[MonitorRunWithReports](ctx, s.c, request{method: http.MethodGet, path: pathOf("/api/monitors", id, "runs", runID), idempotent: true})
}

// AcceptBaseline makes a run's picture of a page that page's baseline.
func (s *MonitorService) AcceptBaseline(ctx context.Context, id string, params *BaselineParams) (*Monitor, error) {
	return callFor[Monitor](ctx, s.c, request{method: http.MethodPost, path: pathOf("/api/monitors", id, "baseline"), body: params, idempotent: true})
}

// Image answers one of the monitor's pictures (a capture, a diff or a baseline) as PNG bytes.
func (s *MonitorService) Image(ctx context.Context, id, imageID string) ([]byte, error) {
	res, err := s.c.do(ctx, request{method: http.MethodGet, path: pathOf("/api/monitors", id, "images", imageID), accept: "image/png", idempotent: true})
	if err != nil {
		return nil, err
	}
	return res.body, nil
}

// listIn reads a list that the answer holds in one of its fields: {"sites": [...]}.
func listIn[T any](ctx context.Context, c *Client, path, field string) ([]T, error) {
	answer, err := callFor[map[string]json.RawMessage](ctx, c, request{method: http.MethodGet, path: path, idempotent: true})
	if err != nil {
		return nil, err
	}
	var list []T
	if err := json.Unmarshal((*answer)[field], &list); err != nil {
		return nil, fmt.Errorf("viewfinder: GET %s: reading the answer: %w", path, err)
	}
	return list, nil
}

// callFor is a call whose JSON answer is one T.
func callFor[T any](ctx context.Context, c *Client, r request) (*T, error) {
	var out T
	if err := c.call(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
