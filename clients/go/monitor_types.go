package viewfinder

import (
	"fmt"
	"sort"
)

// MonitorParams is the body of POST /api/monitors (docs/monitors.md).
type MonitorParams struct {
	// Name is a DNS label, unique in the account.
	Name string `json:"name"`
	// SiteID limits the monitor to a site's allowed domains; without it, the account's full access.
	SiteID string `json:"siteId,omitempty"`
	// Schedule is a five-field cron, or @hourly, @daily...
	Schedule string `json:"schedule"`
	// TimeZone is the IANA zone the schedule is read in (UTC).
	TimeZone     string          `json:"timeZone,omitempty"`
	Suspend      bool            `json:"suspend,omitempty"`
	HistoryLimit int             `json:"historyLimit,omitempty"`
	Compare      *MonitorCompare `json:"compare,omitempty"`
	Pages        []MonitorPage   `json:"pages"`
}

// MonitorUpdateParams is the body of PATCH /api/monitors/{id}: the fields given replace the
// current ones (Pages the whole list; Compare merges).
type MonitorUpdateParams struct {
	Name string `json:"name,omitempty"`
	// SiteID moves the monitor to another site of the account.
	SiteID       string          `json:"siteId,omitempty"`
	Schedule     string          `json:"schedule,omitempty"`
	TimeZone     string          `json:"timeZone,omitempty"`
	Suspend      *bool           `json:"suspend,omitempty"`
	HistoryLimit int             `json:"historyLimit,omitempty"`
	Compare      *MonitorCompare `json:"compare,omitempty"`
	Pages        []MonitorPage   `json:"pages,omitempty"`
}

// MonitorCompare says when a page counts as changed.
type MonitorCompare struct {
	// Threshold is the share of pixels (0 to 1) that may differ (0.001).
	Threshold *float64 `json:"threshold,omitempty"`
	// Baseline is "accepted" (the default) or "previous".
	Baseline string `json:"baseline,omitempty"`
	// PixelTolerance is how different two pixels must be to count (0.1).
	PixelTolerance *float64 `json:"pixelTolerance,omitempty"`
}

// MonitorPage is one page of a monitor, with the capture options that make sense there.
type MonitorPage struct {
	Name            string   `json:"name"`
	URL             string   `json:"url"`
	Quality         Quality  `json:"quality,omitempty"`
	FullPage        bool     `json:"fullPage,omitempty"`
	RemoveAds       *bool    `json:"removeAds,omitempty"`
	Wait            int      `json:"wait,omitempty"`
	WaitForSelector string   `json:"waitForSelector,omitempty"`
	Selector        string   `json:"selector,omitempty"`
	HideSelectors   []string `json:"hideSelectors,omitempty"`
	DarkMode        bool     `json:"darkMode,omitempty"`
	ReducedMotion   bool     `json:"reducedMotion,omitempty"`
	IgnoreRegions   []Region `json:"ignoreRegions,omitempty"`
	VisitOptions
	Credentials *MonitorPageCredentials `json:"credentials,omitempty"`
	// Steps is a journey done before each run's picture (docs/monitors.md, "Journeys"): a fill
	// takes a secret with ValueFrom, a name in Credentials.Values.
	Steps []JourneyStep `json:"steps,omitempty"`
	// Checks says what the page must do to work, judged in every run; axe runs only with MaxViolations.
	Checks *Checks `json:"checks,omitempty"`
}

// MonitorPageCredentials are a monitor page's write-only credentials: those of a capture, and the
// named Values its fill steps take with ValueFrom (a password).
type MonitorPageCredentials struct {
	Credentials
	Values map[string]string `json:"values,omitempty"`
}

// String hides the credentials, so that printing a page never shows them.
func (c MonitorPageCredentials) String() string {
	names := make([]string, 0, len(c.Values))
	for name := range c.Values {
		names = append(names, name)
	}
	sort.Strings(names)
	return fmt.Sprintf("{credentials values:%v}", names)
}

// GoString hides them from %#v too.
func (c MonitorPageCredentials) GoString() string { return c.String() }

// Credentials of a page behind a login, sent to its URL's origin only: in CaptureOptions, and as a
// monitor page's Credentials (write-only there: answers say HasCredentials instead).
type Credentials struct {
	Headers       map[string]string `json:"headers,omitempty"`
	Cookies       []Cookie          `json:"cookies,omitempty"`
	Authorization *Authorization    `json:"authorization,omitempty"`
}

// Region is a rectangle in CSS pixels of the picture, from its top left corner.
type Region struct {
	Left   int `json:"left"`
	Top    int `json:"top"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Monitor is a page monitor as the API shows it.
type Monitor struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	SiteID       *string           `json:"siteId"`
	Schedule     string            `json:"schedule"`
	TimeZone     string            `json:"timeZone"`
	Suspend      bool              `json:"suspend"`
	HistoryLimit int               `json:"historyLimit"`
	Compare      MonitorCompare    `json:"compare"`
	Pages        []MonitorPageView `json:"pages"`
	// Baselines maps a page's name to its baseline picture's id.
	Baselines map[string]string `json:"baselines"`
	ManagedBy *ManagedBy        `json:"managedBy"`
	NextRunAt *string           `json:"nextRunAt"`
	CreatedAt string            `json:"createdAt"`
	UpdatedAt string            `json:"updatedAt"`
}

// MonitorPageView is a monitor's page as answers show it: its credentials only as HasCredentials.
type MonitorPageView struct {
	MonitorPage
	HasCredentials bool `json:"hasCredentials"`
}

// MonitorRun is one run of a monitor, with each page's outcome.
type MonitorRun struct {
	ID          string           `json:"id"`
	Trigger     string           `json:"trigger"` // schedule or manual
	ScheduledAt string           `json:"scheduledAt"`
	StartedAt   string           `json:"startedAt"`
	FinishedAt  string           `json:"finishedAt"`
	Pages       []MonitorRunPage `json:"pages"`
}

// MonitorRunPage is a page's outcome in a run: baseline, unchanged, changed or failed.
type MonitorRunPage struct {
	Page            string   `json:"page"`
	Outcome         string   `json:"outcome"`
	DiffRatio       *float64 `json:"diffRatio"`
	Regions         []Region `json:"regions"`
	CaptureImageID  *string  `json:"captureImageId"`
	DiffImageID     *string  `json:"diffImageId"`
	BaselineImageID *string  `json:"baselineImageId"`
	Error           *string  `json:"error"`
	// Verdict is the page's checks judged in this run; nil without checks or when the capture failed.
	// A journey that stopped fails it, with one failure named after the step (steps[i]).
	Verdict *Verdict `json:"verdict"`
	// Journey is the page's journey in this run; nil for a page without steps.
	Journey *MonitorJourney `json:"journey"`
}

// MonitorJourney is what a run keeps of a page's journey: each step's report, never a value typed.
type MonitorJourney struct {
	Steps []StepReport `json:"steps"`
	// FailedStep is the index (from 0) of the step that failed; nil when every step ran.
	FailedStep *int `json:"failedStep,omitempty"`
	// FailureImageID is the picture of the page when that step failed (GetImage).
	FailureImageID string `json:"failureImageId,omitempty"`
}

// StepReport is one step of a journey as reported: what it acted on, whether it ran, how long it took.
type StepReport struct {
	Action   string `json:"action"`
	Selector string `json:"selector,omitempty"`
	URL      string `json:"url,omitempty"`
	Key      string `json:"key,omitempty"`
	Name     string `json:"name,omitempty"`
	State    string `json:"state,omitempty"`
	// Status is ok, failed or skipped.
	Status     string `json:"status"`
	DurationMs *int   `json:"durationMs,omitempty"`
	// Reason is why the failed step failed: selector-not-visible, navigation-refused, navigation-failed, timeout, action-failed.
	Reason string `json:"reason,omitempty"`
}

// MonitorRunWithReports is one run as GetRun answers it: each page with the report of its visit.
type MonitorRunWithReports struct {
	ID          string                 `json:"id"`
	Trigger     string                 `json:"trigger"`
	ScheduledAt string                 `json:"scheduledAt"`
	StartedAt   string                 `json:"startedAt"`
	FinishedAt  string                 `json:"finishedAt"`
	Pages       []MonitorRunPageReport `json:"pages"`
}

// MonitorRunPageReport is a page of one run with its report (nil when the capture failed).
type MonitorRunPageReport struct {
	MonitorRunPage
	Report *PageReport `json:"report"`
}

// BaselineParams is the body of POST /api/monitors/{id}/baseline: accept that run's picture of the
// page as its baseline.
type BaselineParams struct {
	RunID string `json:"runId"`
	Page  string `json:"page"`
}
