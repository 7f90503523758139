//! A minimal HTTP/1.1 keep-alive client for probing an extender from tests and the
//! benchmark, speaking exactly what kube-scheduler sends (`POST`, JSON, `Content-Length`).
//! Not used by the server itself.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long a read or write may block: longer than any extender deadline, so a probe of a
/// server that never answers fails instead of hanging.
const PATIENCE: Duration = Duration::from_secs(30);

/// One connection to an extender.
pub struct Client {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// A response: status code and body.
#[derive(Debug)]
pub struct Reply {
    /// HTTP status.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl Client {
    /// Connects to `address`.
    pub fn connect(address: SocketAddr) -> std::io::Result<Client> {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(PATIENCE))?;
        stream.set_write_timeout(Some(PATIENCE))?;
        Ok(Client { reader: BufReader::new(stream.try_clone()?), writer: stream })
    }

    /// Sends `POST path` with `body` and reads the reply (the connection stays open).
    pub fn post(&mut self, path: &str, body: &[u8]) -> std::io::Result<Reply> {
        let head =
            format!("POST {path} HTTP/1.1\r\nHost: placid\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", body.len());
        self.writer.write_all(head.as_bytes())?;
        self.writer.write_all(body)?;
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line.split_whitespace().nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
        let mut length = 0usize;
        loop {
            line.clear();
            if self.reader.read_line(&mut line)? == 0 || line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        Ok(Reply { status, body })
    }
}
