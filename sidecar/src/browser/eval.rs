//! Host-owned expressions evaluated in a page: in the page's own world, or in a named
//! isolated world the page's scripts can neither see nor change. Bounded like every CDP call;
//! a thrown exception is an error, never a value.

use chromiumoxide::cdp::browser_protocol::page::CreateIsolatedWorldParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::Page;

use super::{bounded, BrowserError};

/// Evaluates `expression` in `page` (by value, awaiting a promise).
pub(crate) async fn eval_in(page: &Page, expression: String) -> Result<serde_json::Value, BrowserError> {
    evaluate(page, EvaluateParams::new(expression)).await
}

/// Runs `p` by value, awaiting a promise; a thrown exception is an error.
async fn evaluate(page: &Page, mut p: EvaluateParams) -> Result<serde_json::Value, BrowserError> {
    p.return_by_value = Some(true);
    p.await_promise = Some(true);
    let r = bounded("Runtime.evaluate", page.execute(p)).await?;
    if let Some(ex) = &r.result.exception_details {
        return Err(BrowserError::Cdp(format!("evaluation threw: {}", ex.text)));
    }
    Ok(r.result.result.value.clone().unwrap_or(serde_json::Value::Null))
}

/// The execution context of the isolated world named `world` in `page`'s main frame
/// (`Page.createIsolatedWorld`: Chromium keeps one world per name and frame, so globals the
/// host sets there last as long as the document). The page's scripts can neither see nor
/// change what runs there.
pub(crate) async fn isolated_world(page: &Page, world: &str) -> Result<i64, BrowserError> {
    let frame = bounded("mainframe", page.mainframe())
        .await?
        .ok_or_else(|| BrowserError::Cdp("the tab has no main frame".into()))?;
    let mut w = CreateIsolatedWorldParams::new(frame);
    w.world_name = Some(world.into());
    Ok(*bounded("Page.createIsolatedWorld", page.execute(w)).await?.result.execution_context_id.inner())
}

/// Evaluates a host-owned `expression` in the isolated world `world` of `page`'s main frame
/// ([`isolated_world`]) and returns its JSON value (by value; a promise is awaited); a thrown
/// exception is an error.
pub(crate) async fn eval_in_isolated_world(
    page: &Page,
    world: &str,
    expression: String,
) -> Result<serde_json::Value, BrowserError> {
    let ctx = isolated_world(page, world).await?;
    let mut p = EvaluateParams::new(expression);
    p.context_id = Some(chromiumoxide::cdp::js_protocol::runtime::ExecutionContextId::new(ctx));
    evaluate(page, p).await
}
