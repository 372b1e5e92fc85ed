//! The TLS channel the thread probes pay for really is one.

use mitbench::probes::thread::tls;

#[test]
fn tls_channel_handshakes_and_carries_a_byte_each_way() {
    assert_eq!(tls::exchange(0x5a, 0xa5), Ok((0x5a, 0xa5)));
    // Sessions are independent: a second exchange works on a new pair.
    assert_eq!(tls::exchange(1, 2), Ok((1, 2)));
}
