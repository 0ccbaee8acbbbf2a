package viewfinder

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// The request and response types of the API. Their json tags follow the OpenAPI document the
// service serves at /api/openapi.json; contract_test.go fails when the two differ.

// Quality is a capture profile: its viewport and device scale factor.
type Quality string

// The profiles (docs/api.md#profiles).
const (
	QualityStandard Quality = "standard" // 1280×720
	QualityHigh     Quality = "high"     // 1920×1080
	QualityRetina   Quality = "retina"   // 2560×1440 at scale 2
	QualityMobile   Quality = "mobile"   // 375×667 at scale 2, mobile emulation
)

// Format is the encoding of a capture.
type Format string

// The formats; FormatPDF prints the page.
const (
	FormatPNG  Format = "png"
	FormatJPEG Format = "jpeg"
	FormatWebP Format = "webp"
	FormatPDF  Format = "pdf"
)

// MediaType is the Content-Type of this format.
func (f Format) MediaType() string {
	switch f {
	case FormatJPEG:
		return "image/jpeg"
	case FormatWebP:
		return "image/webp"
	case FormatPDF:
		return "application/pdf"
	default:
		return "image/png"
	}
}

// CaptureOptions is the body of a capture (POST /api/screenshot, POST /screenshot): every option of
// docs/api.md and docs/capture-options.md. Give URL or HTML. Zero values are left out, and the
// service's defaults apply; RemoveAds is a pointer because its default is true.
type CaptureOptions struct {
	// URL is the page to capture (http or https).
	URL string `json:"url,omitempty"`
	// HTML is a document to render instead of URL.
	HTML string `json:"html,omitempty"`
	// SiteID is the site the capture counts for (hosted mode): required with a full-access key, and
	// left out with a site key.
	SiteID  string  `json:"site_id,omitempty"`
	Quality Quality `json:"quality,omitempty"`
	// Storage writes the capture to a storage destination (hosted: registered to the account;
	// self-hosted: one of STORAGE_DESTINATIONS); the answer then says where it is
	// (Screenshot.Storage) instead of carrying the image.
	Storage *StorageOption `json:"storage,omitempty"`
	// Wait is extra milliseconds (1000 to 8000) after the load event; without it the smart wait.
	Wait      int    `json:"wait,omitempty"`
	FullPage  bool   `json:"fullPage,omitempty"`
	RemoveAds *bool  `json:"removeAds,omitempty"`
	Format    Format `json:"format,omitempty"`
	// PDF holds the PDF options, with Format FormatPDF.
	PDF *PDFOptions `json:"pdf,omitempty"`
	// ImageQuality (1 to 100) is the jpeg and webp encoder's quality.
	ImageQuality    int      `json:"imageQuality,omitempty"`
	Selector        string   `json:"selector,omitempty"`
	WaitForSelector string   `json:"waitForSelector,omitempty"`
	HideSelectors   []string `json:"hideSelectors,omitempty"`
	DarkMode        bool     `json:"darkMode,omitempty"`
	ReducedMotion   bool     `json:"reducedMotion,omitempty"`
	// CacheTTL is how many seconds a stored result may answer the same request (0: none).
	CacheTTL int `json:"cacheTtl,omitempty"`
	// Credentials (Headers, Cookies, Authorization) are sent to the URL's own origin only (a page
	// behind a login). They cannot ride in a render link.
	Credentials
	VisitOptions
	// Report asks for the page report beside the image (Create only: not with CreateImage, Submit
	// or a render link).
	Report *ReportOptions `json:"report,omitempty"`
	// Steps is a journey: actions done after the page has loaded, before the picture
	// (docs/capture-options.md, "steps"). They cannot ride in a render link.
	Steps []JourneyStep `json:"steps,omitempty"`
	// StepCredentials are named secrets that fill steps type with ValueFrom; write-only.
	StepCredentials map[string]string `json:"credentials,omitempty"`
}

// JourneyStep is one step of a journey: Action and the fields it takes.
type JourneyStep struct {
	Action   string `json:"action"`
	Selector string `json:"selector,omitempty"`
	URL      string `json:"url,omitempty"`
	// Value is what a fill types (a pointer: "" clears a field) or the option a select chooses.
	Value       *string  `json:"value,omitempty"`
	ValueFrom   string   `json:"valueFrom,omitempty"`
	Values      []string `json:"values,omitempty"`
	Key         string   `json:"key,omitempty"`
	State       string   `json:"state,omitempty"`
	X           *int     `json:"x,omitempty"`
	Y           *int     `json:"y,omitempty"`
	NetworkIdle bool     `json:"networkIdle,omitempty"`
	Name        string   `json:"name,omitempty"`
	// Timeout is in milliseconds (5000 when 0).
	Timeout int `json:"timeout,omitempty"`
}

// String hides a fill's value, so that printing a step never shows it.
func (s JourneyStep) String() string {
	return fmt.Sprintf("{%s %s}", s.Action, s.Selector)
}

// VisitOptions are how the browser visits the page, for a capture as for a monitor's page.
type VisitOptions struct {
	// UserAgent replaces the profile's User-Agent.
	UserAgent string `json:"userAgent,omitempty"`
	// InjectCSS is added from the first paint; InjectJS runs once the page has loaded; Click is a
	// selector clicked before the wait.
	InjectCSS string `json:"injectCss,omitempty"`
	InjectJS  string `json:"injectJs,omitempty"`
	Click     string `json:"click,omitempty"`
	// BlockResources: images, fonts, media, scripts. BlockURLs: patterns, * any characters.
	BlockResources []string     `json:"blockResources,omitempty"`
	BlockURLs      []string     `json:"blockUrls,omitempty"`
	Timezone       string       `json:"timezone,omitempty"`
	Locale         string       `json:"locale,omitempty"`
	Geolocation    *Geolocation `json:"geolocation,omitempty"`
}

// PDFOptions are the options of a PDF capture; lengths are strings with a unit ("210mm").
type PDFOptions struct {
	Paper           string     `json:"paper,omitempty"`
	Width           string     `json:"width,omitempty"`
	Height          string     `json:"height,omitempty"`
	Landscape       bool       `json:"landscape,omitempty"`
	Margin          *PDFMargin `json:"margin,omitempty"`
	PrintBackground *bool      `json:"printBackground,omitempty"`
	PageRanges      string     `json:"pageRanges,omitempty"`
	EmulateMedia    string     `json:"emulateMedia,omitempty"`
}

// PDFMargin is a PDF's page margins.
type PDFMargin struct {
	Top    string `json:"top,omitempty"`
	Right  string `json:"right,omitempty"`
	Bottom string `json:"bottom,omitempty"`
	Left   string `json:"left,omitempty"`
}

// Cookie is a cookie of the page's host.
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Authorization is HTTP authentication for the page: Type "basic" with Username and Password, or
// "bearer" with Token.
type Authorization struct {
	Type     string `json:"type"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Token    string `json:"token,omitempty"`
}

// String hides the secrets, so that printing options never shows them.
func (a Authorization) String() string { return fmt.Sprintf("{%s [redacted]}", a.Type) }

// GoString is String, for %#v.
func (a Authorization) GoString() string { return a.String() }

// Geolocation is a position the page reads through navigator.geolocation.
type Geolocation struct {
	Latitude  float64  `json:"latitude"`
	Longitude float64  `json:"longitude"`
	Accuracy  *float64 `json:"accuracy,omitempty"`
}

// Screenshot is the JSON answer of a capture, with the image decoded from its data URI.
type Screenshot struct {
	Success bool `json:"success"`
	// Image is the image (or PDF) bytes; nil when the request asked for storage (Storage says where
	// the capture went instead).
	Image []byte `json:"image"`
	// MediaType is the image's type, from its data URI ("image/png"); empty without an image.
	MediaType        string  `json:"-"`
	URL              string  `json:"url"`
	Quality          Quality `json:"quality"`
	Width            int     `json:"width"`
	Height           int     `json:"height"`
	FileSize         int     `json:"fileSize"`
	ProcessingTimeMs int     `json:"processingTimeMs"`
	WaitMs           int     `json:"waitMs"`
	Truncated        bool    `json:"truncated"`
	Cached           *bool   `json:"cached"`
	SiteID           string  `json:"site_id"`
	// Report is the page report, when the request asked for one.
	Report *PageReport `json:"report"`
	// Journey is the step report (steps) and the capture steps' pictures (captures), when the
	// request had steps.
	Journey map[string]any `json:"journey"`
	// Storage is where the capture was written, when the request asked for storage (Image is then nil).
	Storage *StoredObject `json:"storage"`
}

// StorageOption names a registered storage destination (docs/storage.md), never its credentials.
type StorageOption struct {
	Destination string `json:"destination"`
	// Key is this capture's key template instead of the destination's: {id}, {date}, {format}.
	Key string `json:"key,omitempty"`
	// Presign also answers a presigned GET URL valid this many seconds (1 to 604800).
	Presign int `json:"presign,omitempty"`
}

// StoredObject is where a capture with storage was written.
type StoredObject struct {
	Destination string `json:"destination"`
	Bucket      string `json:"bucket"`
	Key         string `json:"key"`
	// URL is the object's URL, unsigned: readable only as the bucket's own policy allows.
	URL                   string `json:"url"`
	ETag                  string `json:"etag"`
	PresignedURL          string `json:"presignedUrl"`
	PresignedURLExpiresAt string `json:"presignedUrlExpiresAt"`
}

// Destination is a registered S3-compatible bucket; its credentials are write-only.
type Destination struct {
	Name           string `json:"name"`
	Endpoint       string `json:"endpoint"`
	Bucket         string `json:"bucket"`
	Region         string `json:"region"`
	PathStyle      bool   `json:"pathStyle"`
	KeyTemplate    string `json:"keyTemplate"`
	HasCredentials bool   `json:"hasCredentials"`
	// ManagedBy is the Kubernetes Site whose spec.storage this destination is (change it there: the
	// API answers 409), or nil.
	ManagedBy *ManagedBy `json:"managedBy"`
	CreatedAt string     `json:"createdAt"`
	UpdatedAt string     `json:"updatedAt"`
}

// DestinationCredentials are an access key pair, sent once and stored sealed.
type DestinationCredentials struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

// DestinationCreateParams is the body of POST /api/destinations.
type DestinationCreateParams struct {
	Name        string                 `json:"name"`
	Endpoint    string                 `json:"endpoint"`
	Bucket      string                 `json:"bucket"`
	Region      string                 `json:"region,omitempty"`
	PathStyle   *bool                  `json:"pathStyle,omitempty"`
	KeyTemplate string                 `json:"keyTemplate,omitempty"`
	Credentials DestinationCredentials `json:"credentials"`
}

// DestinationUpdateParams is the body of PATCH /api/destinations/{name}: empty fields are left as
// they are; Credentials replaces both keys.
type DestinationUpdateParams struct {
	Endpoint    string                  `json:"endpoint,omitempty"`
	Bucket      string                  `json:"bucket,omitempty"`
	Region      string                  `json:"region,omitempty"`
	PathStyle   *bool                   `json:"pathStyle,omitempty"`
	KeyTemplate string                  `json:"keyTemplate,omitempty"`
	Credentials *DestinationCredentials `json:"credentials,omitempty"`
}

// UnmarshalJSON decodes the data URI of "image" into Image and MediaType.
func (s *Screenshot) UnmarshalJSON(data []byte) error {
	type plain Screenshot
	var raw struct {
		plain
		Image string `json:"image"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*s = Screenshot(raw.plain)
	if raw.Image == "" {
		return nil
	}
	meta, encoded, ok := strings.Cut(raw.Image, ",")
	if !ok || !strings.HasPrefix(meta, "data:") || !strings.HasSuffix(meta, ";base64") {
		return fmt.Errorf("viewfinder: image is not a base64 data URI")
	}
	image, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return fmt.Errorf("viewfinder: image: %w", err)
	}
	s.Image, s.MediaType = image, strings.TrimSuffix(strings.TrimPrefix(meta, "data:"), ";base64")
	return nil
}

// Image is a capture's bytes themselves (an answer to Accept: image/png and the like), with the
// other fields of the answer read from its Viewfinder-* headers.
type Image struct {
	Data []byte
	// ContentType is "image/png", "image/jpeg", "image/webp" or "application/pdf".
	ContentType string
	Width       int
	Height      int
	// Headers holds every Viewfinder-* header of the answer (Viewfinder-Processing-Time-Ms...).
	Headers map[string]string
}

// SubmitParams is one asynchronous capture: the options of a synchronous one, plus where to send
// the outcome and an idempotency key.
type SubmitParams struct {
	CaptureOptions
	// WebhookURL is told the outcome with a signed POST (see ConstructWebhookEvent).
	WebhookURL string `json:"webhookUrl,omitempty"`
	// IdempotencyKey: the same key for the same site within 24 h answers the same capture. When it
	// is empty the client makes one, so that its own retries never submit twice.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// AcceptedCapture is the answer to a submit: the capture's id, state and where to read it.
type AcceptedCapture struct {
	ID        string        `json:"id"`
	Status    CaptureStatus `json:"status"`
	StatusURL string        `json:"statusUrl"`
}

// CaptureStatus is the state of an asynchronous capture.
type CaptureStatus string

// The states; CaptureSucceeded and CaptureFailed are final.
const (
	CaptureQueued    CaptureStatus = "queued"
	CaptureRunning   CaptureStatus = "running"
	CaptureSucceeded CaptureStatus = "succeeded"
	CaptureFailed    CaptureStatus = "failed"
)

// Done reports whether the state is final.
func (s CaptureStatus) Done() bool { return s == CaptureSucceeded || s == CaptureFailed }

// Capture is the status of an asynchronous capture (GET /api/captures/{id}).
type Capture struct {
	ID          string         `json:"id"`
	Status      CaptureStatus  `json:"status"`
	URL         string         `json:"url"`
	CreatedAt   string         `json:"createdAt"`
	StartedAt   *string        `json:"startedAt"`
	FinishedAt  *string        `json:"finishedAt"`
	ExpiresAt   *string        `json:"expiresAt"`
	Attempts    int            `json:"attempts"`
	MaxAttempts int            `json:"maxAttempts"`
	LastError   *string        `json:"lastError"`
	StatusURL   string         `json:"statusUrl"`
	Webhook     *WebhookStatus `json:"webhook"`
	// Result is the synchronous answer, once the capture succeeded.
	Result *Screenshot `json:"result"`
}

// WebhookStatus is the state of a capture's webhook deliveries.
type WebhookStatus struct {
	URL           string  `json:"url"`
	Status        string  `json:"status"` // pending, delivered or failed
	Attempts      int     `json:"attempts"`
	LastError     *string `json:"lastError"`
	DeliveredAt   *string `json:"deliveredAt"`
	NextAttemptAt *string `json:"nextAttemptAt"`
}

// ManagedBy names the Kubernetes resource that owns an object; the API refuses to change it (409).
type ManagedBy struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid"`
}

// Site is a site of the account, with the domains its restricted keys may capture.
type Site struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	AllowedDomains []string   `json:"allowedDomains"`
	ManagedBy      *ManagedBy `json:"managedBy"`
	CreatedAt      string     `json:"createdAt"`
	UpdatedAt      string     `json:"updatedAt"`
}

// SiteCreateParams is the body of POST /api/sites.
type SiteCreateParams struct {
	// Name defaults to the first allowed domain.
	Name           string   `json:"name,omitempty"`
	AllowedDomains []string `json:"allowedDomains"`
}

// SiteUpdateParams is the body of PATCH /api/sites/{id}: a nil field is left as it is; a non-nil
// AllowedDomains replaces the whole list (an empty one included).
type SiteUpdateParams struct {
	Name           *string  `json:"name,omitempty"`
	AllowedDomains []string `json:"allowedDomains"`
}

// MarshalJSON leaves out a nil AllowedDomains but sends an empty one.
func (p SiteUpdateParams) MarshalJSON() ([]byte, error) {
	body := map[string]any{}
	if p.Name != nil {
		body["name"] = *p.Name
	}
	if p.AllowedDomains != nil {
		body["allowedDomains"] = p.AllowedDomains
	}
	return json.Marshal(body)
}

// Key is an API key as lists show it: never its secret.
type Key struct {
	ID              string     `json:"id"`
	Name            string     `json:"name"`
	Kind            string     `json:"kind"` // full or site
	SiteID          *string    `json:"siteId"`
	RestrictDomains bool       `json:"restrictDomains"`
	UnsignedLinks   bool       `json:"unsignedLinks"`
	Prefix          string     `json:"prefix"`
	ManagedBy       *ManagedBy `json:"managedBy"`
	CreatedAt       string     `json:"createdAt"`
	LastUsedAt      *string    `json:"lastUsedAt"`
}

// IssuedKey is a key as create and regenerate answer it, once: with the key itself and the
// signing secret of its render links and webhooks.
type IssuedKey struct {
	Key
	Secret        string `json:"key"`
	SigningSecret string `json:"signingSecret"`
}

// String hides the secrets.
func (k IssuedKey) String() string {
	return fmt.Sprintf("{%s %s %s key: [redacted], signingSecret: [redacted]}", k.ID, k.Name, k.Kind)
}

// GoString is String, for %#v.
func (k IssuedKey) GoString() string { return k.String() }

// KeyCreateParams is the body of POST /api/keys. Without SiteID the key has full access.
type KeyCreateParams struct {
	Name            string `json:"name"`
	SiteID          string `json:"siteId,omitempty"`
	RestrictDomains bool   `json:"restrictDomains,omitempty"`
	UnsignedLinks   bool   `json:"unsignedLinks,omitempty"`
}

// UsageCounts are captures, failures and image bytes.
type UsageCounts struct {
	Captures int   `json:"captures"`
	Failures int   `json:"failures"`
	Bytes    int64 `json:"bytes"`
}

// Usage is GET /api/usage: counts by site id, key id and monitor id.
type Usage struct {
	Sites    map[string]UsageCounts `json:"sites"`
	Keys     map[string]UsageCounts `json:"keys"`
	Monitors map[string]UsageCounts `json:"monitors"`
}
