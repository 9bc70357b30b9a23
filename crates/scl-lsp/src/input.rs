//! The server's standard input, read frame by frame before
//! tower-lsp-server sees it.
//!
//! tower-lsp-server 0.23 reads through tokio-util's `FramedRead`, which
//! ends the stream after the first frame it cannot decode (invalid JSON, an
//! `id` that is neither a number nor a string, a header it does not know):
//! one malformed message would end the session. Here a reader thread parses
//! each frame itself (LSP 3.17 §"Base Protocol": headers, a blank line,
//! `Content-Length` bytes of JSON), passes on every well-formed JSON-RPC
//! 2.0 message re-framed with only its `Content-Length`, and drops the
//! others with a line on stderr. The end of the input, or a frame whose
//! length cannot be known, ends the stream.

use bytes::Bytes;
use serde_json::Value;
use std::io::BufRead;

/// The largest message read: 64 MiB (a file of [`scl_ide::MAX_FILE_BYTES`],
/// 16 MiB, escaped as JSON fits).
const MAX_MESSAGE: usize = 64 << 20;

/// Why a message was dropped, if it was: it must be a JSON object with
/// `"jsonrpc": "2.0"`, a string `method` or a `result`/`error`, and an `id`
/// (if any) that is a string, an integer or null.
fn refusal(msg: &Value) -> Option<&'static str> {
    let Some(o) = msg.as_object() else {
        return Some("not a JSON object");
    };
    if o.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some("no \"jsonrpc\": \"2.0\"");
    }
    match o.get("id") {
        None | Some(Value::Null) | Some(Value::String(_)) => {}
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
        Some(_) => return Some("an id that is neither a string nor an integer"),
    }
    match o.get("method") {
        Some(Value::String(_)) => None,
        Some(_) => Some("a method that is not a string"),
        None if o.contains_key("result") || o.contains_key("error") => None,
        None => Some("neither a method nor a result"),
    }
}

/// Reads one frame's body; `Ok(None)` at the end of the input, `Err` when
/// the stream cannot go on (no usable `Content-Length`).
fn read_frame(r: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut len: Option<usize> = None;
    let mut any = false;
    loop {
        let mut line = Vec::new();
        if r.read_until(b'\n', &mut line).map_err(|e| e.to_string())? == 0 {
            return if any {
                Err("the input ended inside a header".into())
            } else {
                Ok(None)
            };
        }
        any = true;
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                len = value.trim().parse().ok();
            }
        }
    }
    let len = len.ok_or("a message without a valid Content-Length")?;
    if len > MAX_MESSAGE {
        return Err(format!("a message of {len} bytes (at most {MAX_MESSAGE})"));
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).map_err(|e| e.to_string())?;
    Ok(Some(body))
}

/// Standard input as a stream of well-formed, re-framed messages, for
/// `tower_lsp_server::Server::new`. Starts the reader thread.
pub fn stdin() -> impl tokio::io::AsyncRead + Unpin {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<std::io::Result<Bytes>>();
    let spawned = std::thread::Builder::new()
        .name("scl-lsp-stdin".into())
        .spawn(move || {
            let stdin = std::io::stdin();
            let mut r = stdin.lock();
            loop {
                match read_frame(&mut r) {
                    Ok(None) => return,
                    Err(e) => {
                        eprintln!("scl-lsp: stopped reading the input: {e}");
                        return;
                    }
                    Ok(Some(body)) => {
                        let why = match serde_json::from_slice::<Value>(&body) {
                            Ok(v) => refusal(&v),
                            Err(_) => Some("not JSON"),
                        };
                        if let Some(why) = why {
                            eprintln!("scl-lsp: dropped a message: {why}");
                            continue;
                        }
                        let mut framed =
                            format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                        framed.extend_from_slice(&body);
                        if tx.send(Ok(Bytes::from(framed))).is_err() {
                            return;
                        }
                    }
                }
            }
        });
    if let Err(e) = spawned {
        eprintln!("error: cannot start the language server's input thread: {e}");
    }
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    });
    tokio_util::io::StreamReader::new(Box::pin(stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<Result<Option<String>, String>> {
        let mut r = std::io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            let f = read_frame(&mut r).map(|b| b.map(|b| String::from_utf8(b).unwrap()));
            let end = !matches!(f, Ok(Some(_)));
            out.push(f);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn frames_with_any_headers_and_the_end() {
        let input = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nX-Other: 1\r\ncontent-length: 2\r\n\r\n{}Content-Length: 3\n\n[1]";
        assert_eq!(
            frames(input),
            [Ok(Some("{}".into())), Ok(Some("[1]".into())), Ok(None)]
        );
        assert_eq!(
            frames(b"Content-Length: abc\r\n\r\n{}"),
            [Err("a message without a valid Content-Length".into())]
        );
        assert_eq!(
            frames(b"Content-Length: 2\r\n"),
            [Err("the input ended inside a header".into())]
        );
    }

    #[test]
    fn messages_that_are_not_json_rpc_are_refused() {
        let refused = |s: &str| refusal(&serde_json::from_str(s).unwrap());
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":1,"method":"x"}"#), None);
        assert_eq!(refused(r#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(refused(r#"{"jsonrpc":"2.0","id":"a","result":null}"#), None);
        assert_eq!(refused(r#"[1]"#), Some("not a JSON object"));
        assert_eq!(
            refused(r#"{"id":1,"method":"x"}"#),
            Some("no \"jsonrpc\": \"2.0\"")
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
            Some("an id that is neither a string nor an integer")
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
            Some("an id that is neither a string nor an integer")
        );
        assert_eq!(
            refused(r#"{"jsonrpc":"2.0","id":1}"#),
            Some("neither a method nor a result")
        );
    }
}
