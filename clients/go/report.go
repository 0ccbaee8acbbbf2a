package viewfinder

import (
	"encoding/json"
	"strconv"
)

// The page report (docs/capture-options.md, "report"): what the visit that took the picture
// measured, answered beside the image by Captures.Create, and checks judged against it. Only a
// synchronous capture's JSON answer carries it: the service refuses report on asynchronous
// captures and in render links (a 400; LinkParams refuses it before signing).

// ReportOptions asks for the page report. A zero ReportOptions (&viewfinder.ReportOptions{}) is
// "report": true; Axe adds axe-core's audit, Checks the verdict (Screenshot.Report.Checks).
type ReportOptions struct {
	Axe    bool    `json:"axe,omitempty"`
	Checks *Checks `json:"checks,omitempty"`
}

// MarshalJSON writes a zero ReportOptions as true.
func (r ReportOptions) MarshalJSON() ([]byte, error) {
	if !r.Axe && r.Checks == nil {
		return []byte("true"), nil
	}
	type plain ReportOptions
	return json.Marshal(plain(r))
}

// Checks is what the page must do to work; each failure names the check, the value measured and
// the bound.
type Checks struct {
	// Status lists the main document's acceptable final statuses.
	Status            []int                `json:"status,omitempty"`
	MaxConsoleErrors  *CountCheck          `json:"maxConsoleErrors,omitempty"`
	MaxFailedRequests *FailedRequestsCheck `json:"maxFailedRequests,omitempty"`
	WebVitals         *VitalChecks         `json:"webVitals,omitempty"`
	// MaxViolations bounds axe-core's violations (it runs axe on the page).
	MaxViolations *ViolationsCheck `json:"maxViolations,omitempty"`
	Text          []TextCheck      `json:"text,omitempty"`
	// MaxLoadTime is in ms, from navigation start to the end of the load event.
	MaxLoadTime *float64 `json:"maxLoadTime,omitempty"`
}

// CountCheck bounds console errors: at most Max, not counting messages that match Ignore ("*" is
// any characters).
type CountCheck struct {
	Max    int      `json:"max"`
	Ignore []string `json:"ignore,omitempty"`
}

// FailedRequestsCheck bounds failed requests, in all (Max) or per resource type (ByType:
// script, stylesheet, fetch...), not counting URLs that match Ignore.
type FailedRequestsCheck struct {
	Max    *int           `json:"max,omitempty"`
	Ignore []string       `json:"ignore,omitempty"`
	ByType map[string]int `json:"byType,omitempty"`
}

// VitalChecks bounds Web Vitals: each a number in its unit (VitalMax) or the upper end of a band
// (VitalGood, VitalNeedsImprovement).
type VitalChecks struct {
	LCP  VitalBound `json:"LCP,omitempty"`
	CLS  VitalBound `json:"CLS,omitempty"`
	FCP  VitalBound `json:"FCP,omitempty"`
	TTFB VitalBound `json:"TTFB,omitempty"`
	TBT  VitalBound `json:"TBT,omitempty"`
}

// VitalBound is a bound on a Web Vital: VitalGood, VitalNeedsImprovement or VitalMax(n).
type VitalBound string

// The bands a Web Vital may be bound by.
const (
	VitalGood             VitalBound = "good"
	VitalNeedsImprovement VitalBound = "needs-improvement"
)

// VitalMax bounds a Web Vital by a number in its unit (ms, or the CLS score).
func VitalMax(v float64) VitalBound { return VitalBound(strconv.FormatFloat(v, 'f', -1, 64)) }

// MarshalJSON writes a number as a number, a band as a string.
func (b VitalBound) MarshalJSON() ([]byte, error) {
	if _, err := strconv.ParseFloat(string(b), 64); err == nil {
		return []byte(b), nil
	}
	return json.Marshal(string(b))
}

// ViolationsCheck bounds axe-core's violating nodes at or above each impact.
type ViolationsCheck struct {
	Critical  *int     `json:"critical,omitempty"`
	Serious   *int     `json:"serious,omitempty"`
	Moderate  *int     `json:"moderate,omitempty"`
	Minor     *int     `json:"minor,omitempty"`
	SkipRules []string `json:"skipRules,omitempty"`
}

// TextCheck is text the page (or its first element matching Selector) must or must not contain.
type TextCheck struct {
	Selector    string `json:"selector,omitempty"`
	Contains    string `json:"contains,omitempty"`
	NotContains string `json:"notContains,omitempty"`
}

// PageReport is what the visit measured.
type PageReport struct {
	Document       ReportDocument         `json:"document"`
	Console        ReportConsole          `json:"console"`
	FailedRequests Counted[FailedRequest] `json:"failedRequests"`
	Vitals         VitalReadings          `json:"vitals"`
	// LoadTimeMs is nil when the load event had not ended.
	LoadTimeMs *float64               `json:"loadTimeMs"`
	Weight     PageWeight             `json:"weight"`
	Timeline   Counted[TimelineEntry] `json:"timeline"`
	// Accessibility is axe-core's audit, when Axe (or MaxViolations) asked for it.
	Accessibility *Accessibility `json:"accessibility"`
	// Text is the page's text or its elements', when a TextCheck asked for it.
	Text *ReportText `json:"text"`
	// Checks is the verdict of the request's checks.
	Checks *Verdict `json:"checks"`
}

// Counted is a capped list: its first items, and how many there were in all.
type Counted[T any] struct {
	Total int `json:"total"`
	Items []T `json:"items"`
}

// ReportDocument is the main document as it ended, and the redirects that led there.
type ReportDocument struct {
	URL       string     `json:"url"`
	Status    *int       `json:"status"`
	Redirects []Redirect `json:"redirects"`
}

// Redirect is one hop to the main document.
type Redirect struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
}

// ReportConsole is the page's console: errors (console.error, uncaught exceptions, CSP refusals),
// warnings, report-only CSP violations, and the browser's own messages.
type ReportConsole struct {
	Errors        Counted[ConsoleEntry] `json:"errors"`
	Warnings      Counted[ConsoleEntry] `json:"warnings"`
	CSPReportOnly Counted[ConsoleEntry] `json:"cspReportOnly"`
	Browser       Counted[ConsoleEntry] `json:"browser"`
}

// ConsoleEntry is one console message.
type ConsoleEntry struct {
	Level   string `json:"level"` // error or warning
	Kind    string `json:"kind"`  // console, exception, csp-report-only or browser
	Message string `json:"message"`
	URL     string `json:"url"`
	Line    int    `json:"line"`
}

// FailedRequest is a request that failed: Reason http (Status), network (Error), blocked or guard.
type FailedRequest struct {
	URL    string `json:"url"`
	Type   string `json:"type"`
	Reason string `json:"reason"`
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// VitalReadings are the Web Vitals measured (TBT stands in for INP, which needs input).
type VitalReadings struct {
	LCP  VitalReading `json:"LCP"`
	CLS  VitalReading `json:"CLS"`
	FCP  VitalReading `json:"FCP"`
	TTFB VitalReading `json:"TTFB"`
	TBT  VitalReading `json:"TBT"`
}

// VitalReading is one Web Vital: nil Value (and Rating) when the page gave nothing to measure.
type VitalReading struct {
	Value  *float64 `json:"value"`
	Unit   string   `json:"unit"`   // ms or score
	Rating *string  `json:"rating"` // good, needs-improvement or poor
}

// PageWeight is the requests and bytes of the visit, in all and per resource type.
type PageWeight struct {
	Requests int                   `json:"requests"`
	Bytes    int64                 `json:"bytes"`
	ByType   map[string]TypeWeight `json:"byType"`
}

// TypeWeight is the requests and bytes of one resource type.
type TypeWeight struct {
	Requests int   `json:"requests"`
	Bytes    int64 `json:"bytes"`
}

// TimelineEntry is one request of the visit.
type TimelineEntry struct {
	URL        string   `json:"url"`
	Type       string   `json:"type"`
	StartMs    float64  `json:"startMs"`
	DurationMs *float64 `json:"durationMs"`
	Status     *int     `json:"status"`
	Bytes      int64    `json:"bytes"`
	Failed     bool     `json:"failed"`
}

// Accessibility is axe-core's audit: its violations, or the error that kept it from running.
type Accessibility struct {
	Violations *Counted[AxeViolation] `json:"violations"`
	Error      string                 `json:"error"`
}

// AxeViolation is a rule the page breaks, with the first nodes that break it.
type AxeViolation struct {
	ID      string   `json:"id"`
	Impact  *string  `json:"impact"`
	Help    string   `json:"help"`
	Count   int      `json:"count"`
	Targets []string `json:"targets"`
}

// ReportText is the page's text, and its elements' by selector (nil when none matched).
type ReportText struct {
	Page      *BoundedText            `json:"page"`
	Selectors map[string]*BoundedText `json:"selectors"`
}

// BoundedText is a text, and whether it was cut.
type BoundedText struct {
	Text      string `json:"text"`
	Truncated bool   `json:"truncated"`
}

// Verdict is the checks judged against the report: Failing when any check failed.
type Verdict struct {
	Failing  bool           `json:"failing"`
	Failures []CheckFailure `json:"failures"`
	// Passed names the checks evaluated that passed.
	Passed []string `json:"passed"`
}

// CheckFailure is a check that failed: its name (webVitals.LCP, text[0].contains...), the value
// measured, the bound (a number, a string, or a list of statuses) and a sentence.
type CheckFailure struct {
	Check    string          `json:"check"`
	Measured any             `json:"measured"`
	Bound    json.RawMessage `json:"bound"`
	Message  string          `json:"message"`
}
