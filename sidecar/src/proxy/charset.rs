//! The encoding a browser gives an HTML (or XHTML) body, as far as the proxy needs it: is the
//! body ASCII-compatible, so that its markup can be found byte by byte? WHATWG HTML
//! "determining the character encoding" (§13.2.3.1: byte-order mark, then the transport
//! layer's `charset`, then "prescan a byte stream to determine its encoding" over the first
//! 1024 bytes, §13.2.3.2); for XHTML, XML 1.0 §4.3.3 and Appendix F (byte-order mark,
//! `charset`, the XML declaration's `encoding`).
//!
//! The proxy never decodes the body with the answer: it only passes through untouched what is
//! not ASCII-compatible (UTF-16, ISO-2022-JP, the replacement encoding).

use encoding_rs::{Encoding, UTF_16BE, UTF_16LE, UTF_8, WINDOWS_1252, X_USER_DEFINED};

/// The meta prescan looks at this many leading bytes (HTML §13.2.3.2).
pub const PRESCAN_BYTES: usize = 1024;
/// The longest the proxy waits for [`PRESCAN_BYTES`] to arrive before deciding on what it has,
/// in milliseconds (HTML §13.2.3.2 suggests 1024 bytes or 500 ms, whichever comes first).
pub const PRESCAN_WAIT_MS: u64 = 500;

/// What a body's first bytes tell about its encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// Decided: the encoding, or `None` when nothing declares one (the browser then picks its
    /// locale's default, which is ASCII-compatible).
    Known(Option<&'static Encoding>),
    /// More bytes could change the answer.
    NeedMore,
}

impl Sniffed {
    /// Returns true if and only if the encoding is decided and maps the bytes 0x00–0x7F to
    /// ASCII and back (not UTF-16, ISO-2022-JP or replacement).
    pub fn ascii_compatible(self) -> bool {
        matches!(self, Sniffed::Known(e) if e.is_none_or(|e| e.is_ascii_compatible()))
    }
}

/// Sniffs the encoding of a body from its first bytes `prefix`. `transport` is the
/// `Content-Type` `charset`, if it named an encoding; `xhtml` selects XML's rules instead of
/// the HTML prescan. `complete`: no more bytes will be considered (the body ended, or the wait
/// is over); then the answer is always [`Sniffed::Known`].
pub fn sniff(prefix: &[u8], transport: Option<&'static Encoding>, xhtml: bool, complete: bool) -> Sniffed {
    let boms: [&[u8]; 3] = [b"\xEF\xBB\xBF", b"\xFE\xFF", b"\xFF\xFE"];
    if !complete && prefix.len() < 3 && boms.iter().any(|b| b.len() > prefix.len() && b.starts_with(prefix)) {
        return Sniffed::NeedMore;
    }
    if let Some((e, _)) = Encoding::for_bom(prefix) {
        return Sniffed::Known(Some(e));
    }
    if transport.is_some() {
        return Sniffed::Known(transport);
    }
    let window = &prefix[..prefix.len().min(PRESCAN_BYTES)];
    // A meta may come anywhere in the window; an XML declaration only at its very start.
    let complete = complete || prefix.len() >= PRESCAN_BYTES;
    let found = if xhtml { xml_declaration(window) } else { prescan(window).map_or(Scan::Incomplete, Scan::Found) };
    match found {
        Scan::Found(e) => Sniffed::Known(Some(e)),
        Scan::Incomplete if !complete => Sniffed::NeedMore,
        _ => Sniffed::Known(None),
    }
}

/// The outcome of a scan over the bytes available so far.
#[derive(Debug, PartialEq, Eq)]
enum Scan {
    Found(&'static Encoding),
    /// Nothing declared, whatever may follow.
    None,
    /// Nothing declared in these bytes; more could declare one.
    Incomplete,
}

/// A declared encoding as the prescan (and Chromium's XML parser) takes it: a UTF-16 label
/// read from ASCII bytes means UTF-8, `x-user-defined` means windows-1252.
fn declared(label: &[u8]) -> Option<&'static Encoding> {
    let e = Encoding::for_label(label)?;
    Some(if e == UTF_16BE || e == UTF_16LE {
        UTF_8
    } else if e == X_USER_DEFINED {
        WINDOWS_1252
    } else {
        e
    })
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b' ')
}

fn starts_with_ci(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// HTML §13.2.3.2 "prescan a byte stream to determine its encoding", on `b`: the encoding
/// the first decisive meta tag declares, or `None` if `b` holds none (also when `b` ends
/// inside a tag or comment).
fn prescan(b: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    while pos < b.len() {
        let rest = &b[pos..];
        if rest.starts_with(b"<!--") {
            // The comment ends at the first `-->`, whose dashes may be those of `<!--`.
            pos += 2 + find(&b[pos + 2..], b"-->")? + 2;
        } else if starts_with_ci(rest, b"<meta") && rest.get(5).is_some_and(|&c| is_space(c) || c == b'/') {
            pos = match meta(b, pos + 5)? {
                Ok(e) => return Some(e),
                Err(end) => end,
            };
        } else if rest.len() >= 2 && rest[0] == b'<' && rest[1].is_ascii_alphabetic() {
            pos = skip_tag(b, pos + 1)?;
        } else if rest.len() >= 3 && rest.starts_with(b"</") && rest[2].is_ascii_alphabetic() {
            pos = skip_tag(b, pos + 2)?;
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            pos += find(rest, b">")?;
        }
        pos += 1;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Skips a tag other than meta from its name at `pos`: to the next space or `>`, then over its
/// attributes. Returns the position of the byte that ends it (`>`), or `None` if the bytes end
/// first.
fn skip_tag(b: &[u8], mut pos: usize) -> Option<usize> {
    while pos < b.len() && !is_space(b[pos]) && b[pos] != b'>' {
        pos += 1;
    }
    loop {
        match attribute(b, &mut pos) {
            Attr::Some(..) => {}
            Attr::End => return Some(pos),
            Attr::Incomplete => return None,
        }
    }
}

/// The attributes of a `<meta` tag from just after its name (HTML §13.2.3.2 step "<meta"):
/// `Ok` with the encoding it declares, or `Err` with the position of the byte that ended it
/// when it declares none; `None` if `b` ends inside it.
fn meta(b: &[u8], mut pos: usize) -> Option<Result<&'static Encoding, usize>> {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let (mut got_pragma, mut need_pragma) = (false, None);
    // `None`: charset still null; `Some(None)`: a label that named no encoding (failure).
    let mut charset: Option<Option<&'static Encoding>> = None;
    loop {
        let (name, value) = match attribute(b, &mut pos) {
            Attr::Some(n, v) => (n, v),
            Attr::End => break,
            Attr::Incomplete => return None,
        };
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" if value == b"content-type" => got_pragma = true,
            b"content" if charset.is_none() => {
                if let Some(e) = charset_in_content(&value) {
                    charset = Some(Some(e));
                    need_pragma = Some(true);
                }
            }
            b"charset" if charset.is_none() => {
                charset = Some(declared(&value));
                need_pragma = Some(false);
            }
            _ => {}
        }
        seen.push(name);
    }
    Some(match (need_pragma, charset) {
        (Some(need), Some(Some(e))) if !need || got_pragma => Ok(e),
        _ => Err(pos),
    })
}

/// One result of "get an attribute".
enum Attr {
    /// A name (lower-cased) and value (lower-cased).
    Some(Vec<u8>, Vec<u8>),
    /// The tag ended (`pos` is at its `>`).
    End,
    Incomplete,
}

/// HTML §13.2.3.2 "get an attribute", from `pos`; leaves `pos` after what it consumed.
fn attribute(b: &[u8], pos: &mut usize) -> Attr {
    let at = |p: usize| b.get(p).copied();
    while at(*pos).is_some_and(|c| is_space(c) || c == b'/') {
        *pos += 1;
    }
    match at(*pos) {
        None => return Attr::Incomplete,
        Some(b'>') => return Attr::End,
        Some(_) => {}
    }
    let mut name = Vec::new();
    let mut value = Vec::new();
    loop {
        match at(*pos) {
            None => return Attr::Incomplete,
            Some(b'=') if !name.is_empty() => {
                *pos += 1;
                break;
            }
            Some(c) if is_space(c) => {
                while at(*pos).is_some_and(is_space) {
                    *pos += 1;
                }
                match at(*pos) {
                    None => return Attr::Incomplete,
                    Some(b'=') => {
                        *pos += 1;
                        break;
                    }
                    Some(_) => return Attr::Some(name, value),
                }
            }
            Some(b'/' | b'>') => return Attr::Some(name, value),
            Some(c) => name.push(c.to_ascii_lowercase()),
        }
        *pos += 1;
    }
    while at(*pos).is_some_and(is_space) {
        *pos += 1;
    }
    match at(*pos) {
        None => return Attr::Incomplete,
        Some(q @ (b'"' | b'\'')) => loop {
            *pos += 1;
            match at(*pos) {
                None => return Attr::Incomplete,
                Some(c) if c == q => {
                    *pos += 1;
                    return Attr::Some(name, value);
                }
                Some(c) => value.push(c.to_ascii_lowercase()),
            }
        },
        Some(b'>') => return Attr::Some(name, value),
        Some(c) => {
            value.push(c.to_ascii_lowercase());
            *pos += 1;
        }
    }
    loop {
        match at(*pos) {
            None => return Attr::Incomplete,
            Some(c) if is_space(c) || c == b'>' => return Attr::Some(name, value),
            Some(c) => value.push(c.to_ascii_lowercase()),
        }
        *pos += 1;
    }
}

/// HTML §2.5.7 "extracting a character encoding from a meta element", on a `content` value.
fn charset_in_content(s: &[u8]) -> Option<&'static Encoding> {
    let mut pos = 0;
    loop {
        pos += find_ci(&s[pos..], b"charset")? + 7;
        while s.get(pos).copied().is_some_and(is_space) {
            pos += 1;
        }
        if s.get(pos) != Some(&b'=') {
            continue;
        }
        pos += 1;
        while s.get(pos).copied().is_some_and(is_space) {
            pos += 1;
        }
        return match *s.get(pos)? {
            q @ (b'"' | b'\'') => {
                let end = s[pos + 1..].iter().position(|&c| c == q)?;
                declared(&s[pos + 1..pos + 1 + end])
            }
            _ => {
                let end = s[pos..].iter().position(|&c| is_space(c) || c == b';').unwrap_or(s.len() - pos);
                declared(&s[pos..pos + end])
            }
        };
    }
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w.eq_ignore_ascii_case(needle))
}

/// XML 1.0 Appendix F on `b`: a UTF-16 `<?` without a byte-order mark, else the `encoding` of
/// an XML declaration `<?xml … ?>`.
fn xml_declaration(b: &[u8]) -> Scan {
    if b.starts_with(b"<\0?\0") {
        return Scan::Found(UTF_16LE);
    }
    if b.starts_with(b"\0<\0?") {
        return Scan::Found(UTF_16BE);
    }
    let open = b"<?xml";
    if b.len() < open.len() + 1 {
        let could_be = |p: &[&[u8]]| p.iter().any(|x| x.starts_with(b));
        return if could_be(&[open, b"<\0?\0", b"\0<\0?"]) { Scan::Incomplete } else { Scan::None };
    }
    if !b.starts_with(open) || !is_space(b[open.len()]) {
        return Scan::None;
    }
    let Some(end) = find(b, b"?>") else { return Scan::Incomplete };
    let decl = &b[..end];
    let Some(i) = find(decl, b"encoding") else { return Scan::None };
    let rest = decl[i + 8..].trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"=") else { return Scan::None };
    let rest = rest.trim_ascii_start();
    let Some((&q, rest)) = rest.split_first().filter(|(q, _)| matches!(q, b'"' | b'\'')) else {
        return Scan::None;
    };
    match rest.iter().position(|&c| c == q).and_then(|e| declared(&rest[..e])) {
        Some(e) => Scan::Found(e),
        None => Scan::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, ISO_2022_JP, REPLACEMENT, SHIFT_JIS, WINDOWS_1251};

    fn html(b: &[u8]) -> Sniffed {
        sniff(b, None, false, true)
    }

    #[test]
    fn byte_order_mark_then_transport_then_prescan() {
        let k = |e: &'static Encoding| Sniffed::Known(Some(e));
        assert_eq!(sniff(b"\xEF\xBB\xBF<meta charset=shift_jis>", Some(UTF_16LE), false, true), k(UTF_8));
        assert_eq!(sniff(b"\xFF\xFE<\0", Some(UTF_8), false, true), k(UTF_16LE));
        assert_eq!(sniff(b"\xFE\xFF\0<", None, true, true), k(UTF_16BE));
        assert_eq!(sniff(b"<meta charset=shift_jis>", Some(WINDOWS_1251), false, true), k(WINDOWS_1251));
        assert_eq!(sniff(b"<meta charset=shift_jis>", None, false, true), k(SHIFT_JIS));
        assert_eq!(sniff(b"<p>nothing declared", None, false, true), Sniffed::Known(None));
    }

    #[test]
    fn waits_only_while_more_bytes_could_decide() {
        let more = |b: &[u8]| sniff(b, None, false, false);
        assert_eq!(more(b""), Sniffed::NeedMore);
        assert_eq!(more(b"\xEF\xBB"), Sniffed::NeedMore);
        assert_eq!(more(b"\xFF"), Sniffed::NeedMore);
        assert_eq!(more(b"<p>x"), Sniffed::NeedMore, "a meta later in the first 1024 bytes still counts");
        assert_eq!(sniff(b"\xEF\xBB", None, false, true), Sniffed::Known(None));
        assert_eq!(sniff(b"", Some(UTF_8), false, false), Sniffed::NeedMore, "a BOM still overrides the label");
        assert_eq!(sniff(b"<", Some(UTF_8), false, false), Sniffed::Known(Some(UTF_8)));
        assert_eq!(more(b"<meta charset=\"shift_j"), Sniffed::NeedMore);
        assert_eq!(more(b"<!-- <meta charset=shift_jis> "), Sniffed::NeedMore);
        let long = [b"<!--".as_slice(), &[b'x'; PRESCAN_BYTES], b"--><meta charset=shift_jis>"].concat();
        assert_eq!(more(&long), Sniffed::Known(None), "only the first 1024 bytes count");
    }

    #[test]
    fn prescan_follows_the_html_standard() {
        let k = |e: &'static Encoding| Sniffed::Known(Some(e));
        let cases: &[(&[u8], Sniffed)] = &[
            (b"<meta charset=\"iso-8859-1\">", k(WINDOWS_1252)),
            (b"<META CHARSET='Shift_JIS'/>", k(SHIFT_JIS)),
            (b"<meta\ncharset = euc-jp>", k(EUC_JP)),
            (b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-jp\">", k(EUC_JP)),
            (b"<meta content='text/html;charset=\"iso-2022-jp\"' http-equiv=content-type>", k(ISO_2022_JP)),
            // A content charset needs the pragma.
            (b"<meta content=\"text/html; charset=euc-jp\">", Sniffed::Known(None)),
            (b"<meta charset=utf-16le>", k(UTF_8)),
            (b"<meta charset=x-user-defined>", k(WINDOWS_1252)),
            (b"<meta charset=iso-2022-kr>", k(REPLACEMENT)),
            (b"<meta charset=nonsense><meta charset=euc-jp>", k(EUC_JP)),
            // The first charset attribute counts, duplicates are ignored.
            (b"<meta charset=euc-jp charset=shift_jis>", k(EUC_JP)),
            (b"<!-- <meta charset=euc-jp> --><meta charset=shift_jis>", k(SHIFT_JIS)),
            (b"<!--><meta charset=shift_jis>", k(SHIFT_JIS)),
            (b"<div title='<meta charset=euc-jp>'><meta charset=shift_jis>", k(SHIFT_JIS)),
            (b"<script>x='<meta charset=euc-jp>'</script>", k(EUC_JP)),
            (b"<metal charset=euc-jp>", Sniffed::Known(None)),
            // `<?` (and `<!`, `</` without a letter) skips to the first `>`.
            (b"<?php <meta charset=euc-jp> ?>", Sniffed::Known(None)),
            (b"<?php x ?><meta charset=euc-jp>", k(EUC_JP)),
            (b"</x a='<meta charset=euc-jp>'><meta charset=shift_jis>", k(SHIFT_JIS)),
        ];
        for (input, want) in cases {
            assert_eq!(html(input), *want, "{}", input.escape_ascii());
        }
    }

    #[test]
    fn xml_declaration_and_appendix_f() {
        let x = |b: &[u8]| sniff(b, None, true, true);
        assert_eq!(x(b"<?xml version=\"1.0\" encoding='Shift_JIS'?><html/>"), Sniffed::Known(Some(SHIFT_JIS)));
        assert_eq!(x(b"<?xml version=\"1.0\"?><html/>"), Sniffed::Known(None));
        assert_eq!(x(b"<\0?\0x\0m\0l\0"), Sniffed::Known(Some(UTF_16LE)));
        assert_eq!(x(b"\0<\0?\0x\0m\0l"), Sniffed::Known(Some(UTF_16BE)));
        assert_eq!(x(b"<html><meta charset=euc-jp/></html>"), Sniffed::Known(None), "no HTML prescan in XML");
        assert_eq!(sniff(b"<?xml version='1.0' enc", None, true, false), Sniffed::NeedMore);
        assert!(!x(b"<?xml version=\"1.0\" encoding=\"ISO-2022-JP\"?>").ascii_compatible());
    }

    #[test]
    fn which_encodings_are_ascii_compatible() {
        assert!(Sniffed::Known(None).ascii_compatible());
        assert!(Sniffed::Known(Some(SHIFT_JIS)).ascii_compatible());
        for e in [UTF_16BE, UTF_16LE, ISO_2022_JP, REPLACEMENT] {
            assert!(!Sniffed::Known(Some(e)).ascii_compatible(), "{}", e.name());
        }
        assert!(!Sniffed::NeedMore.ascii_compatible());
    }
}
