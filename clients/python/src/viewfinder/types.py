"""Request and response types of the Viewfinder API, named as on the wire.

Request bodies are ``TypedDict``s whose keys are the API's own field names (``fullPage``,
``site_id``), so a body reads exactly like the JSON in the API's documentation, and a type checker
catches a misspelt option. Responses are frozen dataclasses with Python attribute names
(``file_size`` for ``fileSize``); each keeps the answer it was read from in ``raw``.

``tests/test_contract.py`` compares every type here with the live ``GET /api/openapi.json``: a field
added to the API and not here (or the other way round) fails the test suite.
"""

from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Mapping, Optional, Type, TypedDict, TypeVar, Union

__all__ = [
    "Quality", "ImageFormat", "CaptureStatus",
    "PdfMargin", "PdfOptions", "ReportChecks", "ReportOptions", "Cookie", "BasicAuthorization", "BearerAuthorization", "Geolocation",
    "CaptureOptions", "SelfHostedCaptureOptions", "AsyncCaptureOptions", "SelfHostedAsyncCaptureOptions",
    "SiteCreateParams", "SiteUpdateParams", "KeyCreateParams",
    "Region", "MonitorCompare", "MonitorCredentials", "MonitorPageCredentials", "MonitorPageParams", "MonitorCreateParams",
    "MonitorUpdateParams", "MonitorBaselineParams",
    "Screenshot", "Image", "AcceptedCapture", "CaptureWebhookStatus", "Capture", "ManagedBy", "Site",
    "ApiKey", "CreatedApiKey", "UsageCounts", "Usage", "Monitor", "MonitorRunPage", "MonitorRun",
    "MonitorRunStarted", "Deleted", "WebhookEvent",
]

Quality = Literal["standard", "high", "retina", "mobile"]
ImageFormat = Literal["png", "jpeg", "webp", "pdf"]
CaptureStatus = Literal["queued", "running", "succeeded", "failed"]
ResourceKind = Literal["images", "fonts", "media", "scripts"]

# --------------------------------------------------------------------------------------------
# Request bodies (docs/api.md, docs/capture-options.md, docs/hosted.md, docs/async.md, docs/monitors.md)


class PdfMargin(TypedDict, total=False):
    top: str
    right: str
    bottom: str
    left: str


class PdfOptions(TypedDict, total=False):
    """``pdf`` of a capture with ``format: "pdf"``; lengths are strings with a unit (``"1cm"``)."""

    paper: Literal["A4", "Letter", "Legal"]
    width: str
    height: str
    landscape: bool
    margin: PdfMargin
    printBackground: bool
    pageRanges: str
    emulateMedia: Literal["print", "screen"]


class Cookie(TypedDict):
    name: str
    value: str


class BasicAuthorization(TypedDict):
    type: Literal["basic"]
    username: str
    password: str


class BearerAuthorization(TypedDict):
    type: Literal["bearer"]
    token: str


class _GeolocationRequired(TypedDict):
    latitude: float
    longitude: float


class Geolocation(_GeolocationRequired, total=False):
    accuracy: float


class MonitorCredentials(TypedDict, total=False):
    """What a page behind a login needs: sent to the page's own origin only, never returned."""

    headers: Dict[str, str]
    cookies: List[Cookie]
    authorization: Union[BasicAuthorization, BearerAuthorization]


class _PageOptions(TypedDict, total=False):
    """The options of a capture that a monitor's page takes too."""

    quality: Quality
    wait: int
    fullPage: bool
    removeAds: bool
    selector: str
    waitForSelector: str
    hideSelectors: List[str]
    darkMode: bool
    reducedMotion: bool
    userAgent: str
    injectCss: str
    injectJs: str
    click: str
    blockResources: List[ResourceKind]
    blockUrls: List[str]
    timezone: str
    locale: str
    geolocation: Geolocation


class _CaptureBody(_PageOptions, MonitorCredentials, total=False):
    """The options every capture takes, synchronous or asynchronous."""

    url: str
    html: str
    format: ImageFormat
    pdf: PdfOptions
    imageQuality: int
    cacheTtl: int
    #: A journey (docs/capture-options.md, "steps"): up to 50 {"action": ..., ...} objects.
    steps: List[Dict[str, Any]]
    #: Named secrets that fill steps type with ``valueFrom``; write-only.
    credentials: Dict[str, str]


class ReportChecks(TypedDict, total=False):
    """What the page must do to work, judged against its report (docs/capture-options.md, "Checks")."""

    status: List[int]
    maxConsoleErrors: Union[int, Dict[str, Any]]
    maxFailedRequests: Union[int, Dict[str, Any]]
    webVitals: Dict[str, Any]
    maxViolations: Dict[str, Any]
    text: List[Dict[str, str]]
    maxLoadTime: float


class ReportOptions(TypedDict, total=False):
    """``report`` as an object: axe's audit, and checks judged against the report."""

    axe: bool
    checks: ReportChecks


class _StorageOptionRequired(TypedDict):
    destination: str


class StorageOption(_StorageOptionRequired, total=False):
    """``storage`` (docs/storage.md): a destination by name (hosted: registered to the account; self-hosted: one of STORAGE_DESTINATIONS), never its credentials."""

    key: str
    presign: int


class SelfHostedCaptureOptions(_CaptureBody, total=False):
    """The body of ``POST /screenshot`` (self-hosted). Give ``url`` or ``html``, not both.

    ``report`` (JSON answers only: :meth:`screenshots.create`) answers the page report beside the image;
    ``storage`` writes the image to one of the service's STORAGE_DESTINATIONS instead.
    """

    report: Union[bool, ReportOptions]
    storage: StorageOption


class CaptureOptions(SelfHostedCaptureOptions, total=False):
    """The body of ``POST /api/screenshot`` (hosted): the self-hosted body and ``site_id``."""

    site_id: str


class SelfHostedAsyncCaptureOptions(_CaptureBody, total=False):
    """One capture of ``POST /captures`` (self-hosted): no ``report``, which only a JSON answer carries."""

    webhookUrl: str
    idempotencyKey: str
    storage: StorageOption


class AsyncCaptureOptions(SelfHostedAsyncCaptureOptions, total=False):
    """One capture of ``POST /api/captures`` (hosted)."""

    site_id: str


class DestinationCredentials(TypedDict):
    accessKeyId: str
    secretAccessKey: str


class _DestinationCreateRequired(TypedDict):
    name: str
    endpoint: str
    bucket: str
    credentials: DestinationCredentials


class DestinationCreateParams(_DestinationCreateRequired, total=False):
    """``POST /api/destinations``: the credentials are stored sealed and never answered."""

    region: str
    pathStyle: bool
    keyTemplate: str


class DestinationUpdateParams(TypedDict, total=False):
    """``PATCH /api/destinations/{name}``: ``credentials`` replaces both keys."""

    endpoint: str
    bucket: str
    region: str
    pathStyle: bool
    keyTemplate: str
    credentials: DestinationCredentials


class _SiteCreateRequired(TypedDict):
    allowedDomains: List[str]


class SiteCreateParams(_SiteCreateRequired, total=False):
    name: str


class SiteUpdateParams(TypedDict, total=False):
    name: str
    allowedDomains: List[str]


class _KeyCreateRequired(TypedDict):
    name: str


class KeyCreateParams(_KeyCreateRequired, total=False):
    siteId: str
    restrictDomains: bool
    unsignedLinks: bool


class Region(TypedDict):
    """A rectangle in CSS pixels from the picture's top left corner."""

    left: int
    top: int
    width: int
    height: int


class MonitorCompare(TypedDict, total=False):
    threshold: float
    baseline: Literal["accepted", "previous"]
    pixelTolerance: float


class _MonitorPageRequired(TypedDict):
    name: str
    url: str


class MonitorPageCredentials(MonitorCredentials, total=False):
    """A monitor page's write-only credentials: a capture's, and the named ``values`` its fill steps take with ``valueFrom``."""

    values: Dict[str, str]


class MonitorPageParams(_MonitorPageRequired, _PageOptions, total=False):
    """A page of a monitor: a name, a URL and the capture options that make sense for it."""

    ignoreRegions: List[Region]
    credentials: MonitorPageCredentials
    #: A journey done before each run's picture (docs/monitors.md, "Journeys"): a fill takes a secret
    #: with ``valueFrom``, a name in ``credentials["values"]``.
    steps: List[Dict[str, Any]]
    checks: ReportChecks


class _MonitorCreateRequired(TypedDict):
    name: str
    schedule: str
    pages: List[MonitorPageParams]


class MonitorCreateParams(_MonitorCreateRequired, total=False):
    siteId: str
    timeZone: str
    suspend: bool
    historyLimit: int
    compare: MonitorCompare


class MonitorUpdateParams(TypedDict, total=False):
    """``PATCH``: ``pages`` replaces the list, ``compare`` merges; ``siteId: None`` removes the site."""

    name: str
    siteId: Optional[str]
    schedule: str
    timeZone: str
    suspend: bool
    historyLimit: int
    compare: MonitorCompare
    pages: List[MonitorPageParams]


class MonitorBaselineParams(TypedDict):
    runId: str
    page: str


# --------------------------------------------------------------------------------------------
# Responses


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def wire(attribute: str, name: Optional[str] = None, **kwargs: Any) -> Any:
    """A dataclass field read from the JSON member ``name`` (default: the attribute in camelCase)."""
    return field(metadata={"wire": name or _camel(attribute)}, **kwargs)


T = TypeVar("T")


def wire_name(f: "dataclasses.Field[Any]") -> str:
    return f.metadata.get("wire") or _camel(f.name)


def from_json(cls: Type[T], data: Mapping[str, Any]) -> T:
    """Builds a response dataclass from a JSON object; nested dataclasses are read the same way."""
    hints = _hints(cls)
    values: Dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name == "raw":
            continue
        name = wire_name(f)
        if name not in data:
            continue
        values[f.name] = _convert(hints[f.name], data[name])
    return cls(**values, raw=dict(data))  # type: ignore[call-arg]


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        import typing

        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _convert(hint: Any, value: Any) -> Any:
    import typing

    if value is None:
        return None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Union:
        inner = [a for a in args if a is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint) and isinstance(value, Mapping):
        return from_json(hint, value)
    if origin in (list, List) and args and isinstance(value, list):
        return [_convert(args[0], item) for item in value]
    if origin in (dict, Dict) and len(args) == 2 and isinstance(value, Mapping):
        return {k: _convert(args[1], v) for k, v in value.items()}
    return value


def _raw() -> Any:
    return field(default_factory=dict, repr=False, compare=False)


def _decode_data_url(data_url: str) -> bytes:
    _, _, payload = data_url.partition(",")
    return base64.b64decode(payload)


@dataclass(frozen=True)
class StoredObject:
    """Where a capture with ``storage`` was written (docs/storage.md)."""

    destination: str = ""
    bucket: str = ""
    key: str = ""
    url: str = ""
    etag: Optional[str] = None
    presigned_url: Optional[str] = None
    presigned_url_expires_at: Optional[str] = None
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Destination:
    """A registered bucket; ``has_credentials`` stands for the credentials, which are never answered."""

    name: str
    endpoint: str
    bucket: str
    region: str = "us-east-1"
    path_style: bool = False
    key_template: str = ""
    has_credentials: bool = True
    #: The Kubernetes Site whose ``spec.storage`` this destination is (change it there: the API answers 409), or None.
    managed_by: Optional["ManagedBy"] = None
    created_at: str = ""
    updated_at: str = ""
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Screenshot:
    """The JSON answer of a synchronous capture (``image`` is a ``data:`` URL; see ``image_bytes``).

    With the ``storage`` option, ``image`` is None and ``storage`` says where the capture was written.
    """

    success: bool = True
    image: Optional[str] = None
    url: str = ""
    quality: str = "standard"
    width: int = 0
    height: int = 0
    file_size: int = 0
    processing_time_ms: int = 0
    wait_ms: Optional[int] = None
    truncated: Optional[bool] = None
    cached: Optional[bool] = None
    site_id: Optional[str] = wire("site_id", "site_id", default=None)
    report: Optional[Dict[str, Any]] = None
    #: Only when the request had ``steps``: each step's outcome and time, and the capture steps' pictures.
    journey: Optional[Dict[str, Any]] = None
    storage: Optional[StoredObject] = None
    raw: Dict[str, Any] = _raw()

    @property
    def content_type(self) -> str:
        """``image/png``, ``image/jpeg``, ``image/webp`` or ``application/pdf``; empty without an image (``storage``)."""
        return self.image[5:].split(";", 1)[0] if self.image and self.image.startswith("data:") else ""

    @property
    def image_bytes(self) -> bytes:
        """The image (or PDF) itself, decoded from the data URL; ValueError when it went to storage instead."""
        if self.image is None:
            where = f" ({self.storage.bucket}/{self.storage.key})" if self.storage else ""
            raise ValueError(f"this answer has no image: the capture was written to its storage destination{where}")
        return _decode_data_url(self.image)


@dataclass(frozen=True)
class Image:
    """A raw image answer: the bytes, their type, and the ``Viewfinder-*`` headers that describe them."""

    data: bytes
    content_type: str
    url: Optional[str] = None
    quality: Optional[str] = None
    width: Optional[int] = None
    height: Optional[int] = None
    file_size: Optional[int] = None
    processing_time_ms: Optional[int] = None
    wait_ms: Optional[int] = None
    truncated: Optional[bool] = None
    cached: Optional[bool] = None
    site_id: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def save(self, path: str) -> None:
        with open(path, "wb") as out:
            out.write(self.data)


@dataclass(frozen=True)
class AcceptedCapture:
    """The ``202`` answer of a submit: the capture's id, state and where to ask for it."""

    id: str
    status: CaptureStatus
    status_url: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class CaptureWebhookStatus:
    url: Optional[str] = None
    status: Optional[Literal["pending", "delivered", "failed"]] = None
    attempts: Optional[int] = None
    last_error: Optional[str] = None
    delivered_at: Optional[str] = None
    next_attempt_at: Optional[str] = None
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Capture:
    """An asynchronous capture's status; ``result`` once it has succeeded. Times are ISO 8601 strings."""

    id: str
    status: CaptureStatus
    url: str = ""
    created_at: str = ""
    attempts: int = 0
    max_attempts: int = 0
    status_url: str = ""
    started_at: Optional[str] = None
    finished_at: Optional[str] = None
    expires_at: Optional[str] = None
    last_error: Optional[str] = None
    webhook: Optional[CaptureWebhookStatus] = None
    result: Optional[Screenshot] = None
    raw: Dict[str, Any] = _raw()

    @property
    def done(self) -> bool:
        return self.status in ("succeeded", "failed")


@dataclass(frozen=True)
class ManagedBy:
    """The Kubernetes resource that owns an object (the API answers 409 to changes)."""

    kind: str
    namespace: str
    name: str
    uid: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Site:
    id: str
    name: str
    allowed_domains: List[str]
    managed_by: Optional[ManagedBy] = None
    created_at: str = ""
    updated_at: str = ""
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class ApiKey:
    """A key as listed: never its secret."""

    id: str
    name: str
    kind: Literal["full", "site"]
    site_id: Optional[str] = None
    restrict_domains: bool = False
    unsigned_links: bool = False
    prefix: str = ""
    managed_by: Optional[ManagedBy] = None
    created_at: str = ""
    last_used_at: Optional[str] = None
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True, repr=False)
class CreatedApiKey(ApiKey):
    """A key just created or regenerated: ``key`` and ``signing_secret`` are shown this once."""

    key: str = ""
    signing_secret: str = ""

    def __repr__(self) -> str:  # the secrets never reach a log through repr()
        return f"CreatedApiKey(id={self.id!r}, name={self.name!r}, kind={self.kind!r}, site_id={self.site_id!r}, prefix={self.prefix!r})"


@dataclass(frozen=True)
class UsageCounts:
    captures: int = 0
    failures: int = 0
    bytes: int = 0
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Usage:
    """Captures, failures and bytes per site id, key id and monitor id."""

    sites: Dict[str, UsageCounts]
    keys: Dict[str, UsageCounts]
    monitors: Dict[str, UsageCounts]
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Monitor:
    """A page monitor. ``pages`` are as sent (credentials shown as ``hasCredentials``)."""

    id: str
    name: str
    schedule: str
    pages: List[Dict[str, Any]]
    site_id: Optional[str] = None
    time_zone: str = "UTC"
    suspend: bool = False
    history_limit: int = 10
    compare: Dict[str, Any] = field(default_factory=dict)
    baselines: Dict[str, str] = field(default_factory=dict)
    managed_by: Optional[ManagedBy] = None
    next_run_at: Optional[str] = None
    created_at: str = ""
    updated_at: str = ""
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class MonitorRunPage:
    page: str
    outcome: Literal["baseline", "unchanged", "changed", "failed"]
    diff_ratio: Optional[float] = None
    regions: List[Dict[str, int]] = field(default_factory=list)
    capture_image_id: Optional[str] = None
    diff_image_id: Optional[str] = None
    baseline_image_id: Optional[str] = None
    error: Optional[str] = None
    #: The page's checks judged in this run (``failing``, ``failures``, ``passed``); None without checks or when the capture failed.
    #: A journey that stopped fails it, with one failure named after the step (``steps[i]``).
    verdict: Optional[Dict[str, Any]] = None
    #: The page's journey in this run (``steps``, ``failedStep``, ``failureImageId``); None for a page without steps.
    journey: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class MonitorRunPageReport(MonitorRunPage):
    """A page of one run as :meth:`monitors.retrieve_run` answers it: with the report of its visit (None when the capture failed)."""

    report: Optional[Dict[str, Any]] = None


@dataclass(frozen=True)
class MonitorRunWithReports:
    """One run, each page with its report (:meth:`monitors.retrieve_run`)."""

    id: str
    trigger: Literal["schedule", "manual"]
    scheduled_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    pages: List[MonitorRunPageReport] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class MonitorRun:
    id: str
    trigger: Literal["schedule", "manual"]
    scheduled_at: str = ""
    started_at: str = ""
    finished_at: str = ""
    pages: List[MonitorRunPage] = field(default_factory=list)
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class MonitorRunStarted:
    """The answer to "run now": the job that runs it (the run is listed once finished)."""

    job_id: str
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class Deleted:
    deleted: Optional[str]
    raw: Dict[str, Any] = _raw()


@dataclass(frozen=True)
class WebhookEvent:
    """A verified webhook delivery (docs/async.md, "Webhooks")."""

    id: str = ""
    event: Optional[Literal["capture.succeeded", "capture.failed"]] = None
    status: Optional[CaptureStatus] = None
    created_at: Optional[str] = None
    finished_at: Optional[str] = None
    attempts: Optional[int] = None
    metadata: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    image_url: Optional[str] = None
    storage: Optional[StoredObject] = None
    status_url: Optional[str] = None
    raw: Dict[str, Any] = _raw()
