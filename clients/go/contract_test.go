package viewfinder_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/viewfinder/viewfinder/clients/go"
)

// The types follow the OpenAPI document the hosted service serves: a property the API has and a
// type lacks, or the other way round, fails here ("a field added to the API without the libraries
// is a failing test").

type schema = map[string]any

// at walks a schema: keys of objects, "#n" for the n-th item of a list.
func at(t *testing.T, node any, path ...string) schema {
	t.Helper()
	for _, step := range path {
		switch n := node.(type) {
		case map[string]any:
			node = n[step]
		case []any:
			i, err := strconv.Atoi(strings.TrimPrefix(step, "#"))
			if err != nil || i >= len(n) {
				t.Fatalf("no %s in %v", step, path)
			}
			node = n[i]
		}
		if node == nil {
			t.Fatalf("the OpenAPI document has no %s", strings.Join(path, " → "))
		}
	}
	s, ok := node.(map[string]any)
	if !ok {
		t.Fatalf("%v is not a schema", path)
	}
	return s
}

// propertiesOf are the names a schema's properties may take, those of its oneOf branches included.
func propertiesOf(s schema) []string {
	var names []string
	collect := func(s schema) {
		props, _ := s["properties"].(map[string]any)
		for name := range props {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	collect(s)
	for _, branch := range asList(s["oneOf"]) {
		collect(branch.(map[string]any))
	}
	slices.Sort(names)
	return names
}

func asList(v any) []any { l, _ := v.([]any); return l }

// jsonNames are the json names of a struct's fields, those of embedded structs included.
func jsonNames(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			names = append(names, jsonNames(f.Type)...)
			continue
		}
		if name != "-" && name != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

func TestTypesFollowTheOpenAPIDocument(t *testing.T) {
	res, err := http.Get(service.Hosted.Base + "/api/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	body := func(path, method string) schema {
		return at(t, doc, "paths", path, method, "requestBody", "content", "application/json", "schema")
	}
	answer := func(path, method, status string) schema {
		return at(t, doc, "paths", path, method, "responses", status, "content", "application/json", "schema")
	}
	screenshot := body("/api/screenshot", "post")
	submit := body("/api/captures", "post")
	createMonitor := body("/api/monitors", "post")
	monitorPage := at(t, createMonitor, "properties", "pages", "items")
	usage := answer("/api/usage", "get", "200")
	monitor := answer("/api/monitors/{monitorId}", "get", "200")
	run := at(t, answer("/api/monitors/{monitorId}/runs", "get", "200"), "items")
	capture := answer("/api/captures/{captureId}", "get", "200")
	site := answer("/api/sites/{siteId}", "get", "200")

	report := at(t, screenshot, "properties", "report", "anyOf", "#1")
	checks := at(t, report, "properties", "checks")
	pageReport := at(t, answer("/api/screenshot", "post", "200"), "properties", "report")
	counted := func(s schema) schema { return at(t, s, "properties", "items", "items") }
	cases := []struct {
		name   string
		schema schema
		value  any
		// ours: json names a type may have beyond the API's, and why.
		ours []string
	}{
		// Requests.
		{"POST /api/screenshot", screenshot, viewfinder.CaptureOptions{}, nil},
		{"pdf", at(t, screenshot, "properties", "pdf"), viewfinder.PDFOptions{}, nil},
		{"pdf.margin", at(t, screenshot, "properties", "pdf", "properties", "margin"), viewfinder.PDFMargin{}, nil},
		{"cookies[]", at(t, screenshot, "properties", "cookies", "items"), viewfinder.Cookie{}, nil},
		{"authorization", at(t, screenshot, "properties", "authorization"), viewfinder.Authorization{}, nil},
		{"geolocation", at(t, screenshot, "properties", "geolocation"), viewfinder.Geolocation{}, nil},
		{"report", report, viewfinder.ReportOptions{}, nil},
		{"report.checks", checks, viewfinder.Checks{}, nil},
		{"report.checks.maxConsoleErrors", at(t, checks, "properties", "maxConsoleErrors", "anyOf", "#1"), viewfinder.CountCheck{}, nil},
		{"report.checks.maxFailedRequests", at(t, checks, "properties", "maxFailedRequests", "anyOf", "#1"), viewfinder.FailedRequestsCheck{}, nil},
		{"report.checks.webVitals", at(t, checks, "properties", "webVitals"), viewfinder.VitalChecks{}, nil},
		{"report.checks.maxViolations", at(t, checks, "properties", "maxViolations"), viewfinder.ViolationsCheck{}, nil},
		{"report.checks.text[]", at(t, checks, "properties", "text", "items"), viewfinder.TextCheck{}, nil},
		// The service refuses report on asynchronous captures (a 400 with its reason); SubmitParams
		// embeds the synchronous options, report included, and lets the service say so.
		{"POST /api/captures", at(t, submit, "anyOf", "#0"), viewfinder.SubmitParams{}, []string{"report"}},
		{"POST /api/captures batch", at(t, submit, "anyOf", "#1"), struct {
			Captures any `json:"captures"`
		}{}, nil},
		{"POST /api/captures batch item", at(t, submit, "anyOf", "#1", "properties", "captures", "items"), viewfinder.SubmitParams{}, []string{"report"}},
		{"POST /api/sites", body("/api/sites", "post"), viewfinder.SiteCreateParams{}, nil},
		{"PATCH /api/sites/{siteId}", body("/api/sites/{siteId}", "patch"), viewfinder.SiteUpdateParams{}, nil},
		{"POST /api/keys", body("/api/keys", "post"), viewfinder.KeyCreateParams{}, nil},
		{"storage", at(t, screenshot, "properties", "storage"), viewfinder.StorageOption{}, nil},
		{"POST /api/destinations", body("/api/destinations", "post"), viewfinder.DestinationCreateParams{}, nil},
		{"POST /api/destinations credentials", at(t, body("/api/destinations", "post"), "properties", "credentials"), viewfinder.DestinationCredentials{}, nil},
		{"PATCH /api/destinations/{name}", body("/api/destinations/{name}", "patch"), viewfinder.DestinationUpdateParams{}, nil},
		{"POST /api/monitors", createMonitor, viewfinder.MonitorParams{}, nil},
		{"PATCH /api/monitors/{monitorId}", body("/api/monitors/{monitorId}", "patch"), viewfinder.MonitorUpdateParams{}, nil},
		{"monitor compare", at(t, createMonitor, "properties", "compare"), viewfinder.MonitorCompare{}, nil},
		{"monitor pages[]", monitorPage, viewfinder.MonitorPage{}, nil},
		{"monitor pages[].credentials", at(t, monitorPage, "properties", "credentials"), viewfinder.MonitorPageCredentials{}, nil},
		{"monitor pages[].ignoreRegions[]", at(t, monitorPage, "properties", "ignoreRegions", "items"), viewfinder.Region{}, nil},
		{"POST /api/monitors/{monitorId}/baseline", body("/api/monitors/{monitorId}/baseline", "post"), viewfinder.BaselineParams{}, nil},
		// Answers.
		{"POST /api/screenshot 200", answer("/api/screenshot", "post", "200"), viewfinder.Screenshot{}, nil},
		{"POST /api/captures 202", at(t, answer("/api/captures", "post", "202"), "anyOf", "#0"), viewfinder.AcceptedCapture{}, nil},
		{"GET /api/captures/{captureId} 200", capture, viewfinder.Capture{}, nil},
		{"capture webhook", at(t, capture, "properties", "webhook"), viewfinder.WebhookStatus{}, nil},
		{"GET /api/sites/{siteId} 200", site, viewfinder.Site{}, nil},
		{"storage (answer)", at(t, answer("/api/screenshot", "post", "200"), "properties", "storage"), viewfinder.StoredObject{}, nil},
		{"GET /api/destinations/{name} 200", answer("/api/destinations/{name}", "get", "200"), viewfinder.Destination{}, nil},
		{"managedBy", at(t, site, "properties", "managedBy"), viewfinder.ManagedBy{}, nil},
		{"GET /api/keys 200 keys[]", at(t, answer("/api/keys", "get", "200"), "properties", "keys", "items"), viewfinder.Key{}, nil},
		{"POST /api/keys 201", answer("/api/keys", "post", "201"), viewfinder.IssuedKey{}, nil},
		{"GET /api/usage 200", usage, viewfinder.Usage{}, nil},
		{"usage counts", at(t, usage, "properties", "sites", "additionalProperties"), viewfinder.UsageCounts{}, nil},
		{"GET /api/monitors/{monitorId} 200", monitor, viewfinder.Monitor{}, nil},
		{"monitor view pages[]", at(t, monitor, "properties", "pages", "items"), viewfinder.MonitorPageView{}, nil},
		{"GET /api/monitors/{monitorId}/runs 200 []", run, viewfinder.MonitorRun{}, nil},
		{"run pages[]", at(t, run, "properties", "pages", "items"), viewfinder.MonitorRunPage{}, nil},
		{"run pages[].journey", at(t, run, "properties", "pages", "items", "properties", "journey", "oneOf", "#1"), viewfinder.MonitorJourney{}, nil},
		{"run pages[].journey.steps[]", at(t, run, "properties", "pages", "items", "properties", "journey", "oneOf", "#1", "properties", "steps", "items"), viewfinder.StepReport{}, nil},
		{"GET /api/monitors/{monitorId}/runs/{runId} 200", answer("/api/monitors/{monitorId}/runs/{runId}", "get", "200"), viewfinder.MonitorRunWithReports{}, nil},
		{"GET /api/monitors/{monitorId}/runs/{runId} 200 pages[]", at(t, answer("/api/monitors/{monitorId}/runs/{runId}", "get", "200"), "properties", "pages", "items"), viewfinder.MonitorRunPageReport{}, nil},
		{"monitor pages[].checks", at(t, monitorPage, "properties", "checks"), viewfinder.Checks{}, nil},
		{"report (answer)", pageReport, viewfinder.PageReport{}, nil},
		{"report.document", at(t, pageReport, "properties", "document"), viewfinder.ReportDocument{}, nil},
		{"report.document.redirects[]", at(t, pageReport, "properties", "document", "properties", "redirects", "items"), viewfinder.Redirect{}, nil},
		{"report.console", at(t, pageReport, "properties", "console"), viewfinder.ReportConsole{}, nil},
		{"report.console.errors", at(t, pageReport, "properties", "console", "properties", "errors"), viewfinder.Counted[viewfinder.ConsoleEntry]{}, nil},
		{"report.console.errors.items[]", counted(at(t, pageReport, "properties", "console", "properties", "errors")), viewfinder.ConsoleEntry{}, nil},
		{"report.failedRequests.items[]", counted(at(t, pageReport, "properties", "failedRequests")), viewfinder.FailedRequest{}, nil},
		{"report.vitals", at(t, pageReport, "properties", "vitals"), viewfinder.VitalReadings{}, nil},
		{"report.vitals.LCP", at(t, pageReport, "properties", "vitals", "properties", "LCP"), viewfinder.VitalReading{}, nil},
		{"report.weight", at(t, pageReport, "properties", "weight"), viewfinder.PageWeight{}, nil},
		{"report.weight.byType", at(t, pageReport, "properties", "weight", "properties", "byType", "additionalProperties"), viewfinder.TypeWeight{}, nil},
		{"report.timeline.items[]", counted(at(t, pageReport, "properties", "timeline")), viewfinder.TimelineEntry{}, nil},
		{"report.accessibility", at(t, pageReport, "properties", "accessibility"), viewfinder.Accessibility{}, nil},
		{"report.accessibility.violations.items[]", counted(at(t, pageReport, "properties", "accessibility", "oneOf", "#0", "properties", "violations")), viewfinder.AxeViolation{}, nil},
		{"report.text", at(t, pageReport, "properties", "text"), viewfinder.ReportText{}, nil},
		{"report.text.page", at(t, pageReport, "properties", "text", "properties", "page"), viewfinder.BoundedText{}, nil},
		{"report.checks (verdict)", at(t, pageReport, "properties", "checks"), viewfinder.Verdict{}, nil},
		{"report.checks.failures[]", at(t, pageReport, "properties", "checks", "properties", "failures", "items"), viewfinder.CheckFailure{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			api, ours := propertiesOf(c.schema), jsonNames(reflect.TypeOf(c.value))
			for _, name := range api {
				if !slices.Contains(ours, name) {
					t.Errorf("the API has %q; %T lacks it", name, c.value)
				}
			}
			for _, name := range ours {
				if !slices.Contains(api, name) && !slices.Contains(c.ours, name) {
					t.Errorf("%T has %q; the API does not", c.value, name)
				}
			}
		})
	}
}
