"""The types follow the contract: every typed request body and response is compared with the hosted
service's live GET /api/openapi.json, both ways, so that a field added to the API without this
library (or one the library invents) is a failing test."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Set

import httpx
import pytest

from viewfinder import types as t


@pytest.fixture(scope="module")
def openapi(service) -> Dict[str, Any]:
    answer = httpx.get(service["hosted"]["base"] + "/api/openapi.json", timeout=30)
    answer.raise_for_status()
    return answer.json()


def body(doc: Dict[str, Any], method: str, path: str) -> Dict[str, Any]:
    return doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]


def answer(doc: Dict[str, Any], method: str, path: str, status: str = "200") -> Dict[str, Any]:
    return doc["paths"][path][method]["responses"][status]["content"]["application/json"]["schema"]


def typed_keys(typed_dict: Any) -> Set[str]:
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)


def check_typed_dict(typed_dict: Any, schema: Dict[str, Any], where: str) -> None:
    """The TypedDict's keys are the schema's properties, and its required keys the schema's required."""
    properties = set(schema.get("properties", {}))
    assert typed_keys(typed_dict) == properties, (
        f"{typed_dict.__name__} vs {where}: missing {sorted(properties - typed_keys(typed_dict))}, extra {sorted(typed_keys(typed_dict) - properties)}"
    )
    assert set(typed_dict.__required_keys__) == set(schema.get("required", [])), f"{typed_dict.__name__}: required keys differ from {where}"


def check_dataclass(cls: Any, schema: Dict[str, Any], where: str) -> None:
    names = {t.wire_name(f) for f in dataclasses.fields(cls) if f.name != "raw"}
    properties = set(schema.get("properties", {}))
    assert names == properties, f"{cls.__name__} vs {where}: missing {sorted(properties - names)}, extra {sorted(names - properties)}"


def check_capture_options(options: Any, schema: Dict[str, Any], where: str) -> None:
    check_typed_dict(options, schema, where)
    props = schema["properties"]
    check_typed_dict(t.PdfOptions, props["pdf"], f"{where}.pdf")
    check_typed_dict(t.PdfMargin, props["pdf"]["properties"]["margin"], f"{where}.pdf.margin")
    check_typed_dict(t.Geolocation, props["geolocation"], f"{where}.geolocation")
    check_typed_dict(t.Cookie, props["cookies"]["items"], f"{where}.cookies[]")
    basic, bearer = props["authorization"]["oneOf"]
    check_typed_dict(t.BasicAuthorization, basic, f"{where}.authorization (basic)")
    check_typed_dict(t.BearerAuthorization, bearer, f"{where}.authorization (bearer)")


def test_capture_options(openapi) -> None:
    schema = body(openapi, "post", "/api/screenshot")
    check_capture_options(t.CaptureOptions, schema, "POST /api/screenshot")
    as_bool, as_object = schema["properties"]["report"]["anyOf"]
    assert as_bool == {"type": "boolean"}
    check_typed_dict(t.ReportOptions, as_object, "POST /api/screenshot report")
    check_typed_dict(t.ReportChecks, as_object["properties"]["checks"], "POST /api/screenshot report.checks")
    check_typed_dict(t.StorageOption, schema["properties"]["storage"], "POST /api/screenshot storage")
    # Self-hosted POST /screenshot takes the same body without site_id (docs/hosted.md); storage names STORAGE_DESTINATIONS (docs/storage.md).
    assert typed_keys(t.SelfHostedCaptureOptions) == typed_keys(t.CaptureOptions) - {"site_id"}


def test_async_capture_options(openapi) -> None:
    single, batch = body(openapi, "post", "/api/captures")["anyOf"]
    check_capture_options(t.AsyncCaptureOptions, single, "POST /api/captures")
    check_capture_options(t.AsyncCaptureOptions, batch["properties"]["captures"]["items"], "POST /api/captures (batch)")
    assert set(batch["properties"]) == {"captures"}
    assert typed_keys(t.SelfHostedAsyncCaptureOptions) == typed_keys(t.AsyncCaptureOptions) - {"site_id"}
    # An asynchronous capture takes every synchronous option but report (its answer is not JSON beside the image).
    assert typed_keys(t.AsyncCaptureOptions) - {"webhookUrl", "idempotencyKey"} == typed_keys(t.CaptureOptions) - {"report"}


def test_management_bodies(openapi) -> None:
    check_typed_dict(t.SiteCreateParams, body(openapi, "post", "/api/sites"), "POST /api/sites")
    check_typed_dict(t.SiteUpdateParams, body(openapi, "patch", "/api/sites/{siteId}"), "PATCH /api/sites/{siteId}")
    check_typed_dict(t.KeyCreateParams, body(openapi, "post", "/api/keys"), "POST /api/keys")
    check_typed_dict(t.DestinationCreateParams, body(openapi, "post", "/api/destinations"), "POST /api/destinations")
    check_typed_dict(t.DestinationUpdateParams, body(openapi, "patch", "/api/destinations/{name}"), "PATCH /api/destinations/{name}")
    check_typed_dict(t.DestinationCredentials, body(openapi, "post", "/api/destinations")["properties"]["credentials"], "POST /api/destinations credentials")
    check_typed_dict(t.MonitorBaselineParams, body(openapi, "post", "/api/monitors/{monitorId}/baseline"), "POST .../baseline")
    for params, method, path in ((t.MonitorCreateParams, "post", "/api/monitors"), (t.MonitorUpdateParams, "patch", "/api/monitors/{monitorId}")):
        schema = body(openapi, method, path)
        check_typed_dict(params, schema, f"{method.upper()} {path}")
        check_typed_dict(t.MonitorCompare, schema["properties"]["compare"], f"{path} compare")
        page = schema["properties"]["pages"]["items"]
        check_typed_dict(t.MonitorPageParams, page, f"{path} pages[]")
        check_typed_dict(t.Region, page["properties"]["ignoreRegions"]["items"], f"{path} pages[].ignoreRegions[]")
        check_typed_dict(t.Geolocation, page["properties"]["geolocation"], f"{path} pages[].geolocation")
        check_typed_dict(t.MonitorPageCredentials, page["properties"]["credentials"], f"{path} pages[].credentials")


def test_responses(openapi) -> None:
    check_dataclass(t.Screenshot, answer(openapi, "post", "/api/screenshot"), "POST /api/screenshot 200")
    check_dataclass(t.StoredObject, answer(openapi, "post", "/api/screenshot")["properties"]["storage"], "POST /api/screenshot 200 storage")
    check_dataclass(t.Destination, answer(openapi, "get", "/api/destinations/{name}"), "GET /api/destinations/{name}")
    accepted, batch = answer(openapi, "post", "/api/captures", "202")["anyOf"]
    check_dataclass(t.AcceptedCapture, accepted, "POST /api/captures 202")
    check_dataclass(t.AcceptedCapture, batch["properties"]["captures"]["items"], "POST /api/captures 202 (batch)")
    capture = answer(openapi, "get", "/api/captures/{captureId}")
    check_dataclass(t.Capture, capture, "GET /api/captures/{captureId}")
    check_dataclass(t.CaptureWebhookStatus, capture["properties"]["webhook"], "GET /api/captures/{captureId} webhook")
    site = answer(openapi, "get", "/api/sites/{siteId}")
    check_dataclass(t.Site, site, "GET /api/sites/{siteId}")
    check_dataclass(t.ManagedBy, site["properties"]["managedBy"], "managedBy")
    check_dataclass(t.Site, answer(openapi, "get", "/api/sites")["properties"]["sites"]["items"], "GET /api/sites")
    check_dataclass(t.ApiKey, answer(openapi, "get", "/api/keys")["properties"]["keys"]["items"], "GET /api/keys")
    check_dataclass(t.CreatedApiKey, answer(openapi, "post", "/api/keys", "201"), "POST /api/keys 201")
    check_dataclass(t.CreatedApiKey, answer(openapi, "post", "/api/keys/{keyId}/regenerate"), "POST /api/keys/{keyId}/regenerate")
    usage = answer(openapi, "get", "/api/usage")
    check_dataclass(t.Usage, usage, "GET /api/usage")
    check_dataclass(t.UsageCounts, usage["properties"]["sites"]["additionalProperties"], "GET /api/usage counts")
    check_dataclass(t.Deleted, answer(openapi, "delete", "/api/sites/{siteId}"), "DELETE /api/sites/{siteId}")
    monitor = answer(openapi, "get", "/api/monitors/{monitorId}")
    check_dataclass(t.Monitor, monitor, "GET /api/monitors/{monitorId}")
    check_dataclass(t.Monitor, answer(openapi, "get", "/api/monitors")["items"], "GET /api/monitors")
    # A monitor's pages are answered as sent, with hasCredentials in place of the credentials.
    assert set(monitor["properties"]["pages"]["items"]["properties"]) == typed_keys(t.MonitorPageParams) | {"hasCredentials"}
    run = answer(openapi, "get", "/api/monitors/{monitorId}/runs")["items"]
    check_dataclass(t.MonitorRun, run, "GET /api/monitors/{monitorId}/runs")
    check_dataclass(t.MonitorRunPage, run["properties"]["pages"]["items"], "GET .../runs pages[]")
    check_dataclass(t.MonitorRunStarted, answer(openapi, "post", "/api/monitors/{monitorId}/runs", "202"), "POST .../runs 202")
    one = answer(openapi, "get", "/api/monitors/{monitorId}/runs/{runId}")
    check_dataclass(t.MonitorRunWithReports, one, "GET .../runs/{runId}")
    check_dataclass(t.MonitorRunPageReport, one["properties"]["pages"]["items"], "GET .../runs/{runId} pages[]")


def test_every_operation_is_wrapped(openapi) -> None:
    """Every operation of the document outside the operator's routes has a method in this library."""
    wrapped = {
        "captureScreenshot", "submitCaptures", "getCapture", "renderLink",
        "listSites", "createSite", "getSite", "updateSite", "deleteSite",
        "listKeys", "createKey", "deleteKey", "regenerateKey", "getUsage",
        "listDestinations", "createDestination", "getDestination", "updateDestination", "deleteDestination",
        "listMonitors", "createMonitor", "getMonitor", "updateMonitor", "deleteMonitor",
        "listMonitorRuns", "getMonitorRun", "runMonitorNow", "acceptMonitorBaseline", "getMonitorImage",
        "getOpenApiDocument",  # read by this very test
    }
    operations = {
        op["operationId"]
        for path, ops in openapi["paths"].items()
        if not path.startswith("/api/operator/")
        for op in ops.values()
        if isinstance(op, dict) and "operationId" in op
    }
    assert operations == wrapped
