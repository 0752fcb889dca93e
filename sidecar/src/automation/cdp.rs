//! Raw CDP calls on a page's session: method name and JSON params in, JSON result out.
//!
//! chromiumoxide's typed structs refuse a whole answer when Chromium sends a value they do not
//! know (a new AX property name, say); observation and actions read answers as JSON instead.

use chromiumoxide::types::{Command, Method, MethodId};
use chromiumoxide::Page;
use serde_json::Value;

use super::frames::Session;
use crate::browser::{bounded, BrowserError};

/// One CDP command: `method` with `params`, answered with the JSON result.
#[derive(Debug, Clone)]
struct Raw {
    method: &'static str,
    params: Value,
}

impl serde::Serialize for Raw {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.serialize(s)
    }
}

impl Method for Raw {
    fn identifier(&self) -> MethodId {
        self.method.into()
    }
}

impl Command for Raw {
    type Response = Value;
}

/// Calls `method` with `params` on `page`'s own session, bounded like every CDP call (10 s,
/// `cdp_timeout` naming the method).
pub async fn page_call(page: &Page, method: &'static str, params: Value) -> Result<Value, BrowserError> {
    let r = bounded(method, page.execute(Raw { method, params })).await?;
    Ok(r.result)
}

/// Calls `method` with `params` on a session: a page (its own session) or a
/// [`Session`] (a frame process's; see [`super::frames`]), bounded the same way.
pub async fn call(session: impl Into<Session>, method: &'static str, params: Value) -> Result<Value, BrowserError> {
    session.into().call(method, params).await
}

/// Calls `function` (JavaScript source of a function) with `this` = the object `object_id`
/// (an object of `session`) and `args` (each `{"value":…}` or `{"objectId":…}`); returns its
/// value by value.
pub async fn call_on(
    session: impl Into<Session>,
    object_id: &str,
    function: &str,
    args: Vec<Value>,
) -> Result<Value, BrowserError> {
    let r = call(
        session,
        "Runtime.callFunctionOn",
        serde_json::json!({
            "objectId": object_id,
            "functionDeclaration": function,
            "arguments": args,
            "returnByValue": true,
            "awaitPromise": true,
        }),
    )
    .await?;
    if let Some(ex) = r.get("exceptionDetails") {
        let text = ex["exception"]["description"].as_str().or(ex["text"].as_str()).unwrap_or("an exception");
        return Err(BrowserError::Cdp(format!("Runtime.callFunctionOn threw: {text}")));
    }
    Ok(r["result"]["value"].clone())
}
