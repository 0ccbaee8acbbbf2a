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

	cases := []struct {
		name   string
		schema schema
		value  any
	}{
		// Requests.
		{"POST /api/screenshot", screenshot, viewfinder.CaptureOptions{}},
		{"pdf", at(t, screenshot, "properties", "pdf"), viewfinder.PDFOptions{}},
		{"pdf.margin", at(t, screenshot, "properties", "pdf", "properties", "margin"), viewfinder.PDFMargin{}},
		{"cookies[]", at(t, screenshot, "properties", "cookies", "items"), viewfinder.Cookie{}},
		{"authorization", at(t, screenshot, "properties", "authorization"), viewfinder.Authorization{}},
		{"geolocation", at(t, screenshot, "properties", "geolocation"), viewfinder.Geolocation{}},
		{"POST /api/captures", at(t, submit, "anyOf", "#0"), viewfinder.SubmitParams{}},
		{"POST /api/captures batch", at(t, submit, "anyOf", "#1"), struct {
			Captures any `json:"captures"`
		}{}},
		{"POST /api/captures batch item", at(t, submit, "anyOf", "#1", "properties", "captures", "items"), viewfinder.SubmitParams{}},
		{"POST /api/sites", body("/api/sites", "post"), viewfinder.SiteCreateParams{}},
		{"PATCH /api/sites/{siteId}", body("/api/sites/{siteId}", "patch"), viewfinder.SiteUpdateParams{}},
		{"POST /api/keys", body("/api/keys", "post"), viewfinder.KeyCreateParams{}},
		{"POST /api/monitors", createMonitor, viewfinder.MonitorParams{}},
		{"PATCH /api/monitors/{monitorId}", body("/api/monitors/{monitorId}", "patch"), viewfinder.MonitorUpdateParams{}},
		{"monitor compare", at(t, createMonitor, "properties", "compare"), viewfinder.MonitorCompare{}},
		{"monitor pages[]", monitorPage, viewfinder.MonitorPage{}},
		{"monitor pages[].credentials", at(t, monitorPage, "properties", "credentials"), viewfinder.Credentials{}},
		{"monitor pages[].ignoreRegions[]", at(t, monitorPage, "properties", "ignoreRegions", "items"), viewfinder.Region{}},
		{"POST /api/monitors/{monitorId}/baseline", body("/api/monitors/{monitorId}/baseline", "post"), viewfinder.BaselineParams{}},
		// Answers.
		{"POST /api/screenshot 200", answer("/api/screenshot", "post", "200"), viewfinder.Screenshot{}},
		{"POST /api/captures 202", at(t, answer("/api/captures", "post", "202"), "anyOf", "#0"), viewfinder.AcceptedCapture{}},
		{"GET /api/captures/{captureId} 200", capture, viewfinder.Capture{}},
		{"capture webhook", at(t, capture, "properties", "webhook"), viewfinder.WebhookStatus{}},
		{"GET /api/sites/{siteId} 200", site, viewfinder.Site{}},
		{"managedBy", at(t, site, "properties", "managedBy"), viewfinder.ManagedBy{}},
		{"GET /api/keys 200 keys[]", at(t, answer("/api/keys", "get", "200"), "properties", "keys", "items"), viewfinder.Key{}},
		{"POST /api/keys 201", answer("/api/keys", "post", "201"), viewfinder.IssuedKey{}},
		{"GET /api/usage 200", usage, viewfinder.Usage{}},
		{"usage counts", at(t, usage, "properties", "sites", "additionalProperties"), viewfinder.UsageCounts{}},
		{"GET /api/monitors/{monitorId} 200", monitor, viewfinder.Monitor{}},
		{"monitor view pages[]", at(t, monitor, "properties", "pages", "items"), viewfinder.MonitorPageView{}},
		{"GET /api/monitors/{monitorId}/runs 200 []", run, viewfinder.MonitorRun{}},
		{"run pages[]", at(t, run, "properties", "pages", "items"), viewfinder.MonitorRunPage{}},
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
				if !slices.Contains(api, name) {
					t.Errorf("%T has %q; the API does not", c.value, name)
				}
			}
		})
	}
}
