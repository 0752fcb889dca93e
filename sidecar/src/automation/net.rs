//! One request in full (`network --id N`) and the tab's requests as HAR 1.2 (`network --har`),
//! from the network log ([`super::logs`]) and the bodies Chromium still holds
//! (`Network.getRequestPostData`, `Network.getResponseBody`).
//!
//! Redaction (docs/cli.md): the values of `Authorization`, `Proxy-Authorization`, `Cookie` and
//! `Set-Cookie` are `[redacted]` unless the human set `[agent] show_secrets = true`. A request
//! body's fields named like a secret (password, otp, token, …, or like one of the page's
//! password, one-time-code or card inputs) are `[redacted]` whatever the
//! config says, and a multipart body holding one is withheld whole, as is the response to such
//! a request (a login's answer carries the session).

use base64::Engine;
use chromiumoxide::Page;
use serde_json::{json, Map, Value};

use super::logs::{Detail, Request};
use crate::browser::session::call;

/// Most bytes of a body shown, per body (the rest is cut and `truncated` says so).
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Most body bytes one HAR carries in all; past it entries go without their response text.
pub const MAX_HAR_BODY_BYTES: usize = 4 * 1024 * 1024;
/// What a hidden value is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Headers whose values are credentials.
const SECRET_HEADERS: [&str; 4] = ["authorization", "proxy-authorization", "cookie", "set-cookie"];
/// Parts of a field name that mark its value as a secret (matched lowercase, `-`/`_` kept).
const SECRET_NAMES: [&str; 12] =
    ["pass", "pwd", "otp", "token", "secret", "one-time", "onetime", "totp", "2fa", "mfa", "cvc", "cvv"];

/// Names that are secrets only whole (`pw`, not `pwa`'s parts).
const SECRET_WORDS: [&str; 3] = ["pw", "pin", "code"];

/// A form or JSON field of this name holds a secret: named like one, or named like a secret
/// field (password, one-time code) of the page (`page_secrets`).
pub fn secret_name(name: &str, page_secrets: &[String]) -> bool {
    let n = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| n.contains(s))
        || SECRET_WORDS.contains(&n.as_str())
        || page_secrets.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// The names of the active page's secret fields (password, one-time-code and payment
/// inputs, in its main document), read in the isolated world: a request posting one of them
/// is redacted even when its name says nothing. Empty when it cannot be read.
pub async fn page_secrets(page: &Page) -> Vec<String> {
    let js = "(() => Array.from(document.querySelectorAll('input[type=password i], \
              input[autocomplete~=one-time-code i], input[autocomplete~=current-password i], \
              input[autocomplete~=new-password i], input[autocomplete^=cc- i]'), i => i.name || i.id)\
              .filter(Boolean).slice(0, 64))()";
    match crate::browser::eval_in_isolated_world(page, super::walk::WORLD, js.into()).await {
        Ok(Value::Array(a)) => a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

/// Headers as `[{"name","value"}]`, credentials redacted unless `show_secrets`; the count of
/// values redacted is added to `redacted`.
fn headers(h: &[(String, String)], show_secrets: bool, redacted: &mut u64) -> Value {
    h.iter()
        .map(|(k, v)| {
            let hide = !show_secrets && SECRET_HEADERS.contains(&k.to_ascii_lowercase().as_str());
            if hide {
                *redacted += 1;
            }
            json!({"name": k, "value": if hide { REDACTED } else { v.as_str() }})
        })
        .collect()
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// A request body with its secret fields redacted → (text, fields redacted), or `None` when
/// it must be withheld whole (a multipart body with a secret part).
pub fn redact_body(text: &str, content_type: &str, page_secrets: &[String]) -> Option<(String, u64)> {
    let ct = content_type.to_ascii_lowercase();
    if ct.contains("multipart/") {
        let secret = text.match_indices("name=\"").any(|(i, m)| {
            let rest = &text[i + m.len()..];
            rest.split('"').next().is_some_and(|n| secret_name(n, page_secrets))
        });
        return (!secret).then(|| (text.to_string(), 0));
    }
    if ct.contains("json") || (ct.is_empty() && text.trim_start().starts_with(['{', '['])) {
        if let Ok(mut v) = serde_json::from_str::<Value>(text) {
            let mut n = 0;
            redact_json(&mut v, page_secrets, &mut n);
            return Some((if n > 0 { v.to_string() } else { text.to_string() }, n));
        }
    }
    let formish = ct.contains("x-www-form-urlencoded")
        || (!text.is_empty() && text.contains('=') && !text.contains(char::is_whitespace));
    if formish {
        let mut n = 0;
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(text.as_bytes())
            .map(|(k, v)| {
                if secret_name(&k, page_secrets) {
                    n += 1;
                    (k.into_owned(), REDACTED.to_string())
                } else {
                    (k.into_owned(), v.into_owned())
                }
            })
            .collect();
        if n > 0 {
            return Some((url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish(), n));
        }
    }
    Some((text.to_string(), 0))
}

fn redact_json(v: &mut Value, page_secrets: &[String], n: &mut u64) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if secret_name(k, page_secrets) && !x.is_object() && !x.is_array() && !x.is_null() {
                    *x = REDACTED.into();
                    *n += 1;
                } else {
                    redact_json(x, page_secrets, n);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| redact_json(x, page_secrets, n)),
        _ => {}
    }
}

/// A body as shown: `{"text"|"base64","bytes","truncated"}` (text when it is UTF-8), cut to
/// [`MAX_BODY_BYTES`].
fn shown(bytes: &[u8]) -> Value {
    let cut = bytes.len() > MAX_BODY_BYTES;
    let part = &bytes[..bytes.len().min(MAX_BODY_BYTES)];
    match std::str::from_utf8(part) {
        Ok(t) => json!({"text": t, "bytes": bytes.len(), "truncated": cut}),
        // A cut may split a character: a text whose only flaw is its last character is text.
        Err(e) if cut && e.valid_up_to() + 4 > part.len() && e.error_len().is_none() => {
            json!({"text": std::str::from_utf8(&part[..e.valid_up_to()]).unwrap_or(""), "bytes": bytes.len(), "truncated": true})
        }
        Err(_) => json!({
            "base64": base64::engine::general_purpose::STANDARD.encode(part),
            "bytes": bytes.len(),
            "truncated": cut,
        }),
    }
}

/// The bodies of `r` → (request body, response body, the request held a secret field). Each
/// is a [`shown`] body, `{"withheld": why}` or `{"unavailable": why}` (Chromium no longer
/// holds it, or there is none).
async fn bodies(page: &Page, r: &Request, page_secrets: &[String]) -> (Value, Value, u64) {
    let d = &r.detail;
    let mut secret_fields = 0;
    let mut withheld = false;
    let request_body = if d.has_post_data {
        match call(page, "Network.getRequestPostData", json!({"requestId": r.id})).await {
            Ok(v) => {
                let text = v["postData"].as_str().unwrap_or("");
                match redact_body(text, header(&d.request_headers, "content-type").unwrap_or(""), page_secrets) {
                    Some((t, n)) => {
                        secret_fields = n;
                        let mut b = shown(t.as_bytes());
                        if n > 0 {
                            b["redacted_fields"] = n.into();
                        }
                        b
                    }
                    None => {
                        withheld = true;
                        json!({"withheld": "a multipart form with a secret field"})
                    }
                }
            }
            Err(e) => json!({"unavailable": e.to_string()}),
        }
    } else {
        Value::Null
    };
    let response_body = if withheld || secret_fields > 0 {
        json!({"withheld": "the answer to a request that sent a secret field"})
    } else if r.status.is_none() || d.ended.is_none() {
        json!({"unavailable": "no response body (not answered, still loading, or failed)"})
    } else {
        match call(page, "Network.getResponseBody", json!({"requestId": r.id})).await {
            Ok(v) => {
                let body = v["body"].as_str().unwrap_or("");
                if v["base64Encoded"] == true {
                    match base64::engine::general_purpose::STANDARD.decode(body) {
                        Ok(b) => shown(&b),
                        Err(e) => json!({"unavailable": format!("not base64: {e}")}),
                    }
                } else {
                    shown(body.as_bytes())
                }
            }
            Err(e) => json!({"unavailable": e.to_string()}),
        }
    };
    (request_body, response_body, secret_fields + u64::from(withheld))
}

/// The phases of a request in ms (HAR's `timings`: -1 where a phase does not apply) and its
/// total time, from `Network.ResourceTiming` and the log's clocks.
fn timings(d: &Detail) -> (Value, f64) {
    let total = d.ended.map_or(-1.0, |e| ((e - d.sent) * 1000.0).max(0.0));
    let t = &d.timing;
    let f = |k: &str| t[k].as_f64().unwrap_or(-1.0);
    if !t.is_object() {
        let phases = json!({"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0,
                            "wait": total.max(0.0), "receive": 0});
        return (phases, total);
    }
    let span = |a: f64, b: f64| if a >= 0.0 && b >= a { b - a } else { -1.0 };
    let (dns, connect, ssl) =
        (span(f("dnsStart"), f("dnsEnd")), span(f("connectStart"), f("connectEnd")), span(f("sslStart"), f("sslEnd")));
    let send = span(f("sendStart"), f("sendEnd")).max(0.0);
    let wait = span(f("sendEnd"), f("receiveHeadersEnd")).max(0.0);
    // requestTime is when the request started on the protocol clock; the rest is ms after it.
    let headers_at = t["requestTime"].as_f64().unwrap_or(d.sent) * 1000.0 + f("receiveHeadersEnd").max(0.0);
    let receive = d.ended.map_or(0.0, |e| (e * 1000.0 - headers_at).max(0.0));
    let first = [f("dnsStart"), f("connectStart"), f("sendStart")].into_iter().find(|x| *x >= 0.0).unwrap_or(0.0);
    let blocked = (t["requestTime"].as_f64().unwrap_or(d.sent) - d.sent) * 1000.0 + first;
    let phases = json!({"blocked": blocked.max(0.0), "dns": dns, "connect": connect, "ssl": ssl,
                        "send": send, "wait": wait, "receive": receive});
    (phases, total)
}

/// `network --id N`: request `r` in full → `{"n","method","url","kind","status","status_text",
/// "error","mime","protocol","started","request_headers":[{"name","value"}],
/// "response_headers","timing":{"total_ms","blocked","dns","connect","ssl","send","wait",
/// "receive"},"encoded_bytes","request_body","response_body","redacted"}` (`redacted`: header
/// values and body fields hidden).
pub async fn detail(page: &Page, r: &Request, show_secrets: bool) -> Value {
    let d = &r.detail;
    let mut redacted = 0;
    let request_headers = headers(&d.request_headers, show_secrets, &mut redacted);
    let response_headers = headers(&d.response_headers, show_secrets, &mut redacted);
    let secrets = page_secrets(page).await;
    let (request_body, response_body, hidden) = bodies(page, r, &secrets).await;
    let (mut timing, total) = timings(d);
    timing["total_ms"] = if total >= 0.0 { json!(total) } else { Value::Null };
    json!({
        "n": r.n, "method": r.method, "url": r.url, "kind": r.kind, "status": r.status,
        "status_text": d.status_text, "error": r.error, "mime": d.mime, "protocol": d.protocol,
        "started": iso8601(d.wall_time),
        "request_headers": request_headers, "response_headers": response_headers,
        "timing": timing, "encoded_bytes": d.encoded_bytes,
        "request_body": request_body, "response_body": response_body,
        "redacted": redacted + hidden,
    })
}

/// `network --har`: `requests` as a HAR 1.2 log (redacted as [`detail`]; response texts up to
/// [`MAX_BODY_BYTES`] each and [`MAX_HAR_BODY_BYTES`] in all) → `{"log":{…}}`.
pub async fn har(page: &Page, requests: &[Request], show_secrets: bool) -> Value {
    let mut entries = Vec::with_capacity(requests.len());
    let mut budget = MAX_HAR_BODY_BYTES;
    let secrets = page_secrets(page).await;
    for r in requests {
        let d = &r.detail;
        let mut redacted = 0;
        let (timings, total) = timings(d);
        let (req_body, resp_body, _) = if budget > 0 {
            bodies(page, r, &secrets).await
        } else {
            let over = json!({"unavailable": "over the HAR's body budget"});
            (over.clone(), over, 0)
        };
        let mut request = json!({
            "method": r.method, "url": r.url, "httpVersion": http_version(&d.protocol),
            "cookies": [], "headers": headers(&d.request_headers, show_secrets, &mut redacted),
            "queryString": query(&r.url), "headersSize": -1, "bodySize": -1,
        });
        if !req_body.is_null() {
            let mime = header(&d.request_headers, "content-type").unwrap_or("");
            let text = req_body["text"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| req_body["withheld"].as_str().map_or(String::new(), |w| format!("[withheld: {w}]")));
            request["bodySize"] = req_body["bytes"].clone();
            request["postData"] = json!({"mimeType": mime, "text": text});
        }
        let mut content = Map::new();
        content.insert("size".into(), resp_body["bytes"].as_u64().unwrap_or(0).into());
        content.insert("mimeType".into(), d.mime.clone().into());
        if let Some(t) = resp_body["text"].as_str() {
            budget = budget.saturating_sub(t.len());
            content.insert("text".into(), t.into());
        } else if let Some(b) = resp_body["base64"].as_str() {
            budget = budget.saturating_sub(b.len());
            content.insert("text".into(), b.into());
            content.insert("encoding".into(), "base64".into());
        } else if let Some(w) = resp_body["withheld"].as_str() {
            content.insert("comment".into(), format!("withheld: {w}").into());
        } else if let Some(u) = resp_body["unavailable"].as_str() {
            // An earlier document's resources are gone from Chromium once it is replaced.
            content.insert("comment".into(), format!("unavailable: {u}").into());
        }
        let mut entry = json!({
            "startedDateTime": iso8601(d.wall_time),
            "time": total.max(0.0),
            "request": request,
            "response": {
                "status": r.status.unwrap_or(0), "statusText": d.status_text,
                "httpVersion": http_version(&d.protocol), "cookies": [],
                "headers": headers(&d.response_headers, show_secrets, &mut redacted),
                "content": content, "redirectURL": header(&d.response_headers, "location").unwrap_or(""),
                "headersSize": -1, "bodySize": d.encoded_bytes.map_or(-1, |b| b as i64),
            },
            "cache": {},
            "timings": timings,
            "_n": r.n,
            "_resourceType": r.kind,
        });
        if let Some(e) = &r.error {
            entry["_error"] = e.clone().into();
        }
        entries.push(entry);
    }
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "Porthole", "version": env!("CARGO_PKG_VERSION")},
        "entries": entries,
    }})
}

fn http_version(protocol: &str) -> String {
    match protocol {
        "" => "HTTP/1.1".into(),
        "h2" => "HTTP/2".into(),
        "h3" => "HTTP/3".into(),
        p => p.to_ascii_uppercase(),
    }
}

fn query(u: &str) -> Value {
    let Ok(u) = url::Url::parse(u) else { return json!([]) };
    u.query_pairs().map(|(k, v)| json!({"name": k, "value": v})).collect()
}

/// `secs` since the epoch as ISO 8601 UTC with milliseconds (`2026-12-07T03:51:12.345Z`).
pub fn iso8601(secs: f64) -> String {
    let ms = (secs * 1000.0).round().max(0.0) as i64;
    let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    format!("{y:04}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_fields_are_redacted_by_name() {
        let (t, n) =
            redact_body("user=ann&password=hunter2&otp=123456", "application/x-www-form-urlencoded", &[]).unwrap();
        assert_eq!(n, 2);
        assert!(!t.contains("hunter2") && !t.contains("123456") && t.contains("user=ann"), "{t}");
        let (t, n) =
            redact_body(r#"{"user":"ann","auth":{"access_token":"abc"},"q":[1]}"#, "application/json", &[]).unwrap();
        assert_eq!(n, 1);
        assert!(!t.contains("abc") && t.contains("ann"), "{t}");
        let (t, n) = redact_body("plain words with = sign", "text/plain", &[]).unwrap();
        assert_eq!((t.as_str(), n), ("plain words with = sign", 0));
        let multi = "--x\r\nContent-Disposition: form-data; name=\"pwd\"\r\n\r\nhunter2\r\n--x--";
        assert!(redact_body(multi, "multipart/form-data; boundary=x", &[]).is_none());
        assert!(!secret_name("shipping", &[]) && secret_name("new-password", &[]) && secret_name("one-time-code", &[]));
        assert!(secret_name("pw", &[]) && !secret_name("pwa_mode", &[]));
        let (t, n) = redact_body("user=ann&answer=xyzzy", "", &["answer".to_string()]).unwrap();
        assert_eq!(n, 1);
        assert!(!t.contains("xyzzy"), "a field the page marks secret: {t}");
    }

    #[test]
    fn bodies_are_text_or_base64_and_bounded() {
        assert_eq!(shown(b"{\"a\":1}")["text"], "{\"a\":1}");
        let bin = shown(&[0xff, 0x00, 0x80]);
        assert_eq!((bin["base64"].as_str(), bin["truncated"].as_bool()), (Some("/wCA"), Some(false)));
        let big = "é".repeat(MAX_BODY_BYTES);
        let s = shown(big.as_bytes());
        assert_eq!(s["truncated"], true);
        assert!(s["text"].as_str().unwrap().len() <= MAX_BODY_BYTES);
        assert_eq!(s["bytes"], big.len());
    }

    #[test]
    fn headers_hide_credentials_unless_shown() {
        let h = vec![("Authorization".to_string(), "Bearer x".to_string()), ("Accept".into(), "*/*".into())];
        let mut n = 0;
        let v = headers(&h, false, &mut n);
        assert_eq!((v[0]["value"].as_str(), v[1]["value"].as_str(), n), (Some(REDACTED), Some("*/*"), 1));
        assert_eq!(headers(&h, true, &mut n)[0]["value"], "Bearer x");
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_615_472.345), "2026-12-07T03:51:12.345Z");
    }
}
