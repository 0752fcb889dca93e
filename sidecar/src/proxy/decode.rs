//! Content codings the proxy undoes before instrumenting a document (RFC 9110 §8.4): gzip,
//! deflate, br (RFC 7932) and zstd (RFC 8878, with RFC 9659's 8 MiB window bound), streaming
//! (async-compression): each decoder produces output only as its reader asks for it, so a
//! small body that inflates enormously (a decompression bomb) costs no more memory than the
//! codec's window.

use async_compression::tokio::bufread::{BrotliDecoder, DeflateDecoder, GzipDecoder, ZlibDecoder, ZstdDecoder};
use hyper::header::{HeaderMap, CONTENT_ENCODING};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};

/// The largest zstd window accepted, as a power of two: 8 MiB (RFC 9659 §3).
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

/// One content coding the proxy can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    /// `gzip` (also `x-gzip`, RFC 9110 §8.4.1.3).
    Gzip,
    /// `deflate`: zlib-wrapped as RFC 9110 §8.4.1.2 says, or raw deflate as some servers send
    /// it (told apart by the zlib header, as browsers do).
    Deflate,
    /// `br`.
    Brotli,
    /// `zstd`.
    Zstd,
}

/// The body's content codings in the order they were applied (`identity` dropped; none for an
/// identity body), or `None` if one of them is unknown (such a body is passed on untouched).
pub fn codings(h: &HeaderMap) -> Option<Vec<Coding>> {
    let mut out = Vec::new();
    for value in h.get_all(CONTENT_ENCODING) {
        for token in value.to_str().ok()?.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            out.push(match token.to_ascii_lowercase().as_str() {
                "identity" => continue,
                "gzip" | "x-gzip" => Coding::Gzip,
                "deflate" => Coding::Deflate,
                "br" => Coding::Brotli,
                "zstd" => Coding::Zstd,
                _ => return None,
            });
        }
    }
    Some(out)
}

/// A decoded body: what `raw` becomes once `codings` are undone, last applied first. Reads
/// from `raw` only as the caller reads; a corrupt or truncated stream is a read error.
pub type Decoded = Box<dyn AsyncRead + Send + Unpin>;

/// Undoes `codings` on `raw` (see [`Decoded`]); with no codings, returns `raw` itself. Errors
/// come only from peeking at a deflate body's first bytes.
pub async fn decoder(raw: impl AsyncBufRead + Send + Unpin + 'static, codings: &[Coding]) -> std::io::Result<Decoded> {
    let mut body: Decoded = Box::new(raw);
    for &c in codings.iter().rev() {
        body = undo(Box::new(BufReader::new(body)), c).await?;
    }
    Ok(body)
}

/// One decoder over `raw`.
async fn undo(mut raw: Box<dyn AsyncBufRead + Send + Unpin>, c: Coding) -> std::io::Result<Decoded> {
    Ok(match c {
        Coding::Gzip => Box::new(GzipDecoder::new(raw)),
        Coding::Deflate => {
            if is_zlib(raw.fill_buf().await?) {
                Box::new(ZlibDecoder::new(raw))
            } else {
                Box::new(DeflateDecoder::new(raw))
            }
        }
        Coding::Brotli => Box::new(BrotliDecoder::new(raw)),
        Coding::Zstd => Box::new(ZstdDecoder::with_params(
            raw,
            &[async_compression::zstd::DParameter::window_log_max(ZSTD_WINDOW_LOG_MAX)],
        )),
    })
}

/// Returns true if and only if `head` starts with a zlib header (RFC 1950 §2.2: method 8,
/// window ≤ 32 KiB, check bits) rather than raw deflate data. Fewer than two bytes count as
/// zlib, the standard form.
fn is_zlib(head: &[u8]) -> bool {
    match head {
        [cmf, flg, ..] => cmf & 0x0F == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_compression::tokio::write::{BrotliEncoder, DeflateEncoder, GzipEncoder, ZlibEncoder, ZstdEncoder};
    use hyper::header::HeaderValue;
    use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};

    #[test]
    fn content_encoding_is_parsed_in_order() {
        let parse = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(CONTENT_ENCODING, HeaderValue::from_str(v).unwrap());
            }
            codings(&h)
        };
        use Coding::*;
        assert_eq!(parse(&[]), Some(vec![]));
        assert_eq!(parse(&["identity"]), Some(vec![]));
        assert_eq!(parse(&["GZIP"]), Some(vec![Gzip]));
        assert_eq!(parse(&["x-gzip"]), Some(vec![Gzip]));
        assert_eq!(parse(&["deflate, br"]), Some(vec![Deflate, Brotli]));
        assert_eq!(parse(&["zstd", "identity, gzip"]), Some(vec![Zstd, Gzip]));
        assert_eq!(parse(&["gzip, compress"]), None);
        assert_eq!(parse(&["dcb"]), None);
    }

    async fn encode<W: AsyncWrite + Unpin>(mut w: W, data: &[u8]) -> W {
        w.write_all(data).await.unwrap();
        w.shutdown().await.unwrap();
        w
    }

    async fn decode(raw: Vec<u8>, codings: &[Coding]) -> std::io::Result<Vec<u8>> {
        let mut out = Vec::new();
        decoder(std::io::Cursor::new(raw), codings).await?.read_to_end(&mut out).await?;
        Ok(out)
    }

    #[tokio::test]
    async fn every_coding_and_a_chain_round_trip() {
        let data = b"<!doctype html><title>Caf\xE9</title>".repeat(100);
        let gz = encode(GzipEncoder::new(Vec::new()), &data).await.into_inner();
        let cases = [
            (gz.clone(), vec![Coding::Gzip]),
            (encode(ZlibEncoder::new(Vec::new()), &data).await.into_inner(), vec![Coding::Deflate]),
            (encode(DeflateEncoder::new(Vec::new()), &data).await.into_inner(), vec![Coding::Deflate]),
            (encode(BrotliEncoder::new(Vec::new()), &data).await.into_inner(), vec![Coding::Brotli]),
            (encode(ZstdEncoder::new(Vec::new()), &data).await.into_inner(), vec![Coding::Zstd]),
            (encode(ZstdEncoder::new(Vec::new()), &gz).await.into_inner(), vec![Coding::Gzip, Coding::Zstd]),
            (data.clone(), vec![]),
        ];
        for (raw, codings) in cases {
            assert_eq!(decode(raw, &codings).await.unwrap(), data, "{codings:?}");
        }
    }

    #[tokio::test]
    async fn corrupt_truncated_and_oversized_windows_are_errors() {
        let data = vec![b'x'; 100_000];
        let gz = encode(GzipEncoder::new(Vec::new()), &data).await.into_inner();
        assert!(decode(gz[..gz.len() / 2].to_vec(), &[Coding::Gzip]).await.is_err(), "truncated");
        assert!(decode(b"\x1f\x8b\x08\x00garbage".to_vec(), &[Coding::Gzip]).await.is_err(), "corrupt");
        // A zstd frame asking for a 16 MiB window (RFC 9659 allows 8 MiB).
        let params = [async_compression::zstd::CParameter::window_log(24)];
        let enc = ZstdEncoder::with_quality_and_params(Vec::new(), async_compression::Level::Default, &params);
        let big = encode(enc, &data).await.into_inner();
        assert!(decode(big, &[Coding::Zstd]).await.is_err(), "window past 8 MiB");
    }

    #[test]
    fn zlib_header_or_raw_deflate() {
        assert!(is_zlib(&[0x78, 0x9c]));
        assert!(is_zlib(&[0x78, 0x01]));
        assert!(is_zlib(&[0x78]));
        assert!(!is_zlib(&[0x63, 0x60]));
        assert!(!is_zlib(&[0xf3, 0x48]));
    }
}
