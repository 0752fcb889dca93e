//! The input worker of one viewer socket: the view's inputs applied to the active page in
//! order (trusted CDP input, each bounded), held behind a pending dialog, typing coalesced
//! into text when behind; tells the frame pump that input happened.

use std::sync::Arc;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams,
    MouseButton as CdpButton,
};
use tokio::sync::mpsc;

use super::inputs::InputQueue;
use super::keys::virtual_key_code;
use super::msg::{self, EditOp, Inbound, KeyEvent, MouseButton, MouseEvent};
use super::outbox::Outbox;
use super::popup::Popups;
use super::pump::PumpCtl;
use super::PASTE_CHUNK_CHARS;
use crate::browser::{bounded, BrowserError, BrowserRef, ViewState};

/// Inputs waiting past which typing is sent as text to catch up.
const COALESCE_WHEN_BEHIND: usize = 8;

/// True if and only if a JavaScript dialog is pending on the active tab.
fn dialog_blocks_active(s: &ViewState) -> bool {
    s.dialog.as_ref().is_some_and(|d| s.active.as_deref() == Some(d.tab.as_str()))
}

/// Script: the selected text (a focused text field's selection, else the document's);
/// `cut` also deletes it from an editable field.
fn edit_script(op: EditOp) -> &'static str {
    match op {
        EditOp::SelectAll => {
            r#"(() => { const a = document.activeElement;
  if (a && typeof a.select === 'function' && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA')) a.select();
  else document.execCommand('selectAll'); return null; })()"#
        }
        EditOp::Copy => {
            r#"(() => { const a = document.activeElement;
  if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA') && typeof a.selectionStart === 'number')
    return a.value.slice(a.selectionStart, a.selectionEnd);
  return String(getSelection()); })()"#
        }
        EditOp::Cut => {
            r#"(() => { const a = document.activeElement;
  if (a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA') && typeof a.selectionStart === 'number') {
    const t = a.value.slice(a.selectionStart, a.selectionEnd);
    if (t && !a.readOnly) document.execCommand('delete');
    return t; }
  const t = String(getSelection());
  if (t && document.activeElement && document.activeElement.isContentEditable) document.execCommand('delete');
  return t; })()"#
        }
    }
}

/// Applies inputs in order, each bounded; tells the pump that input happened.
pub(super) async fn input_worker(
    browser: BrowserRef,
    out: Outbox,
    inputs: Arc<InputQueue>,
    ctl: mpsc::UnboundedSender<PumpCtl>,
) {
    let mut popups = Popups::default();
    let mut state = browser.subscribe();
    loop {
        let input = tokio::select! {
            i = inputs.pop() => i,
            Some(m) = popups.next() => {
                out.text(m);
                continue;
            }
        };
        // Every input before the barrier has been dispatched (or dropped): say so.
        if let Inbound::Flush(id) = input {
            out.text(msg::flushed(id));
            continue;
        }
        // A JavaScript dialog is modal: the page takes no input until it is answered (a
        // dispatch would only wait out the CDP bound and fail). Inputs wait for it, in order.
        if state.wait_for(|s| !dialog_blocks_active(s)).await.is_err() {
            return;
        }
        // A crashed page takes no input (each dispatch would wait out the CDP bound); the
        // view shows it crashed and offers Reload.
        if state.borrow().crashed {
            continue;
        }
        // Behind CDP, typing catches up as text (see `InputQueue::take_text_run`).
        let r = match inputs.take_text_run(&input, COALESCE_WHEN_BEHIND) {
            Some((text, last_move)) => {
                let r = apply(&browser, &out, Inbound::Text(text), &mut popups).await;
                match last_move {
                    Some(m) if r.is_ok() => apply(&browser, &out, m, &mut popups).await,
                    _ => r,
                }
            }
            None => apply(&browser, &out, input, &mut popups).await,
        };
        if let Err(e) = r {
            tracing::debug!("viewer input: {e}");
            if !matches!(e, BrowserError::Busy | BrowserError::Disconnected) {
                out.text(msg::error(&e.to_string()));
            }
        }
        let _ = ctl.send(PumpCtl::Input);
    }
}

async fn apply(browser: &BrowserRef, out: &Outbox, input: Inbound, popups: &mut Popups) -> Result<(), BrowserError> {
    match input {
        Inbound::Mouse { event, x, y, button, clicks, modifiers, delta_x, delta_y } => {
            let page = browser.active_page()?;
            // The `<select>` probe must be in the page before a press can reach a select;
            // after the first press in a tab this costs nothing.
            if event == MouseEvent::Down && button == MouseButton::Left {
                if let Err(e) = popups.ensure(&page).await {
                    tracing::debug!("popup probe: {e}");
                }
            }
            if matches!(event, MouseEvent::Down | MouseEvent::Up) {
                popups.pointer(event == MouseEvent::Down, x, y);
            }
            let kind = match event {
                MouseEvent::Down => DispatchMouseEventType::MousePressed,
                MouseEvent::Up => DispatchMouseEventType::MouseReleased,
                MouseEvent::Move => DispatchMouseEventType::MouseMoved,
                MouseEvent::Wheel => DispatchMouseEventType::MouseWheel,
            };
            let mut p = DispatchMouseEventParams::new(kind, x, y);
            p.modifiers = Some(modifiers);
            p.button = Some(match button {
                MouseButton::None => CdpButton::None,
                MouseButton::Left => CdpButton::Left,
                MouseButton::Middle => CdpButton::Middle,
                MouseButton::Right => CdpButton::Right,
                MouseButton::Back => CdpButton::Back,
                MouseButton::Forward => CdpButton::Forward,
            });
            p.click_count = Some(clicks);
            if event == MouseEvent::Wheel {
                p.delta_x = Some(delta_x);
                p.delta_y = Some(delta_y);
            }
            browser.dispatch_input(bounded("Input.dispatchMouseEvent", page.execute(p))).await?;
        }
        Inbound::Key { event, key, code, text, modifiers } => {
            let page = browser.active_page()?;
            // Enter must be a keyDown carrying "\r", or forms are not submitted.
            let text = if key == "Enter" && modifiers & 0b0111 == 0 { "\r".to_string() } else { text };
            let kind = match event {
                KeyEvent::Down if !text.is_empty() => DispatchKeyEventType::KeyDown,
                KeyEvent::Down => DispatchKeyEventType::RawKeyDown,
                KeyEvent::Up => DispatchKeyEventType::KeyUp,
            };
            let mut p = DispatchKeyEventParams::new(kind);
            p.windows_virtual_key_code = Some(virtual_key_code(&code, &key));
            p.modifiers = Some(modifiers);
            if event == KeyEvent::Down {
                p.unmodified_text = Some(text.clone());
                p.text = Some(text);
            }
            p.key = Some(key);
            p.code = Some(code);
            browser.dispatch_input(bounded("Input.dispatchKeyEvent", page.execute(p))).await?;
        }
        Inbound::Text(text) => {
            let page = browser.active_page()?;
            let chars: Vec<char> = text.chars().collect();
            for chunk in chars.chunks(PASTE_CHUNK_CHARS) {
                let s: String = chunk.iter().collect();
                browser.dispatch_input(bounded("Input.insertText", page.execute(InsertTextParams::new(s)))).await?;
            }
        }
        Inbound::PopupChoice(i) => popups.choose(&browser.active_page()?, i).await?,
        Inbound::PopupValue(v) => popups.set_value(&browser.active_page()?, &v).await?,
        Inbound::Zoom(f) => browser.set_zoom(f).await?,
        Inbound::Inspect { x, y } => out.text(super::inspect::inspect(&browser.active_page()?, x, y).await?),
        Inbound::Find { text, backwards, next } => {
            out.text(super::find::find(&browser.active_page()?, &text, backwards, next).await?)
        }
        Inbound::Edit(op) => {
            let v = browser.eval(edit_script(op).to_string()).await?;
            if op != EditOp::SelectAll {
                out.text(msg::clipboard(v.as_str().unwrap_or("")));
            }
        }
        Inbound::Dialog { .. } | Inbound::Sync(_) | Inbound::Repaint | Inbound::Flush(_) => {}
    }
    Ok(())
}
