//! Connecting to one of a host's addresses as browsers do (Happy Eyeballs, RFC 8305 section
//! 5): the addresses interleaved by family, starting with the family of the first; one attempt
//! started at once, and the next one 250 ms later or as soon as an attempt fails, whichever
//! comes first; the first connection made wins and the other attempts are dropped; at most 16
//! addresses of a name are tried. A host whose IPv6 (or first) address swallows connection
//! attempts then costs a quarter second, where trying the addresses in turn cost the whole
//! connect timeout for every new connection. Written here rather than taken from hyper-util's
//! `HttpConnector` (which races two families the same way) because that connector resolves names itself and divides the
//! connect timeout among the addresses, where trawl connects only to the addresses the
//! address guard allowed and gives each attempt the whole timeout.

use std::net::SocketAddr;
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::net::TcpStream;

use super::error::FetchError;
use crate::fault::FaultKind;

/// How long an attempt runs alone before the next address is tried too (RFC 8305's
/// recommended Connection Attempt Delay).
const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// Most addresses of one name tried for one connection: a hostile name server can answer
/// with thousands, and each attempt holds a socket until its timeout.
const MAX_ATTEMPTS: usize = 16;

/// The first TCP connection made to one of `addrs`, each attempt allowed `timeout`; the last
/// failure when none connects.
pub(super) async fn connect_first(
    addrs: &[SocketAddr],
    timeout: Duration,
) -> Result<(TcpStream, SocketAddr), FetchError> {
    let attempt = |addr: SocketAddr| async move {
        (
            addr,
            tokio::time::timeout(timeout, TcpStream::connect(addr)).await,
        )
    };
    let mut waiting = interleaved(addrs).into_iter().take(MAX_ATTEMPTS);
    let mut running = FuturesUnordered::new();
    let mut last = FetchError::Connect {
        kind: FaultKind::Connect,
        detail: "no address".into(),
    };
    loop {
        if running.is_empty() {
            match waiting.next() {
                Some(addr) => running.push(attempt(addr)),
                None => return Err(last),
            }
        }
        let more = waiting.len() > 0;
        tokio::select! {
            Some((addr, result)) = running.next() => match result {
                Ok(Ok(stream)) => return Ok((stream, addr)),
                Ok(Err(e)) => last = FetchError::connect(&e, format!("{addr}: {e}")),
                Err(_) => {
                    last = FetchError::Connect {
                        kind: FaultKind::ConnectTimeout,
                        detail: format!("{addr}: timed out after {timeout:?}"),
                    }
                }
            },
            () = tokio::time::sleep(ATTEMPT_DELAY), if more => {
                if let Some(addr) = waiting.next() {
                    running.push(attempt(addr));
                }
            }
        }
    }
}

/// `addrs` with the two families taking turns, the first address's family first, each in its
/// own order.
fn interleaved(addrs: &[SocketAddr]) -> Vec<SocketAddr> {
    let Some(first) = addrs.first() else {
        return Vec::new();
    };
    let (mut same, mut other): (Vec<_>, Vec<_>) = addrs
        .iter()
        .copied()
        .partition(|a| a.is_ipv6() == first.is_ipv6());
    let mut order = Vec::with_capacity(addrs.len());
    same.reverse();
    other.reverse();
    while !same.is_empty() || !other.is_empty() {
        order.extend(same.pop());
        order.extend(other.pop());
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn families_take_turns_from_the_first_ones() {
        let mixed = [
            a("[::1]:80"),
            a("[::2]:80"),
            a("[::3]:80"),
            a("10.0.0.1:80"),
            a("10.0.0.2:80"),
        ];
        assert_eq!(
            interleaved(&mixed),
            [
                a("[::1]:80"),
                a("10.0.0.1:80"),
                a("[::2]:80"),
                a("10.0.0.2:80"),
                a("[::3]:80")
            ]
        );
        let v4_first = [a("10.0.0.1:80"), a("[::1]:80")];
        assert_eq!(interleaved(&v4_first), v4_first);
        assert!(interleaved(&[]).is_empty());
    }

    #[tokio::test]
    async fn an_address_that_swallows_attempts_costs_a_quarter_second_not_the_timeout() {
        // A listener whose accept queue is full: the kernel drops further SYNs, so a connect
        // to it hangs, as one to a blackholed address does.
        let full = tokio::net::TcpSocket::new_v4().unwrap();
        full.bind(a("127.0.0.1:0")).unwrap();
        let full = full.listen(0).unwrap();
        let swallowing = full.local_addr().unwrap();
        let mut fillers = Vec::new();
        for _ in 0..3 {
            fillers.push(tokio::spawn(TcpStream::connect(swallowing)));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let open = tokio::net::TcpListener::bind(a("127.0.0.1:0"))
            .await
            .unwrap();
        let answering = open.local_addr().unwrap();
        // Tried in turn, the first address would hold the connection for the whole timeout.
        let timeout = Duration::from_secs(600);
        let both = [swallowing, answering];
        let raced = connect_first(&both, timeout);
        let (_, peer) = tokio::time::timeout(Duration::from_secs(60), raced)
            .await
            .expect("connected long before the timeout")
            .unwrap();
        assert_eq!(peer, answering);
        let closed = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap()
        };
        let error = connect_first(&[closed], timeout).await.unwrap_err();
        assert!(error.to_string().contains("refused"), "{error}");
        // Past the first 16 addresses of a name, none is tried.
        let mut many = vec![closed; MAX_ATTEMPTS];
        many.push(answering);
        let error = connect_first(&many, timeout).await.unwrap_err();
        assert!(error.to_string().contains("refused"), "{error}");
        many.remove(0);
        assert_eq!(connect_first(&many, timeout).await.unwrap().1, answering);
    }
}
