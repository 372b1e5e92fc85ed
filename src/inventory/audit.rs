//! The audit subsystem as the kernel reports it over netlink: whether it
//! is enabled, and its rules (AUDIT_GET, AUDIT_LIST_RULES), read-only and
//! without auditd. A syscall rule sends every syscall of every new process
//! down the audit path (what one rule costs getpid: docs/hooks.md);
//! a `-a never,task` rule keeps new processes off it.
//!
//! Two fixed-layout kernel structs behind the netlink framing are read
//! here by hand: netlink-packet-audit would bring netlink-proto's
//! asynchronous stack (futures, a codec) for two request/reply exchanges,
//! and its rule type does not say which filter list a rule sits on any
//! more plainly than the kernel's `flags` word does.

use serde::{Deserialize, Serialize};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const AUDIT_GET: u16 = 1000;
const AUDIT_LIST_RULES: u16 = 1013;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const HEADER: usize = 16;
/// audit_rule_data up to its variable buffer: flags, action, field_count,
/// then four arrays of AUDIT_BITMASK_SIZE (64) words, then buflen.
const RULE_FIXED: usize = 4 * (3 + 4 * 64 + 1);
const FILTER_TASK: u32 = 0x01;
const FILTER_ENTRY: u32 = 0x02;
const FILTER_EXIT: u32 = 0x04;
/// AUDIT_FILTER_PREPEND: a flag on the list word, not a list.
const FILTER_PREPEND: u32 = 0x10;
const ACTION_NEVER: u32 = 0;

/// The audit subsystem's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// 0 off, 1 on, 2 on and locked.
    pub enabled: u32,
    /// The audit daemon's pid; 0 where none is registered.
    pub auditd_pid: u32,
    pub rules: usize,
    /// Rules on the syscall entry or exit filter: each makes the syscalls
    /// of every new process take the audit path.
    pub syscall_rules: usize,
    /// Whether a `-a never,task` rule keeps new processes off the audit
    /// path (Fedora's and RHEL's default).
    pub never_task: bool,
}

impl Audit {
    /// Off, with no `never,task` rule: where audit was on earlier in the
    /// boot (which the kernel does not say), new processes still take its
    /// path.
    pub fn off_and_unkept(&self) -> bool {
        self.enabled == 0 && !self.never_task
    }
}

impl std::fmt::Display for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match self.enabled {
            0 => "off",
            1 => "on",
            _ => "on, locked",
        };
        write!(
            f,
            "{state}, {} rule(s), {} on the syscall path, {}",
            self.rules,
            self.syscall_rules,
            match self.never_task {
                true => "new processes kept off it (never,task)",
                false => "no never,task rule",
            }
        )
    }
}

/// The state from an AUDIT_GET reply's payload (`struct audit_status`)
/// and the rules' payloads (`struct audit_rule_data` each).
pub fn from_replies(status: &[u8], rules: &[&[u8]]) -> Result<Audit, String> {
    let word = |bytes: &[u8], index: usize| -> Option<u32> {
        let at = index * 4;
        Some(u32::from_ne_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    };
    let (enabled, auditd_pid) = match (word(status, 1), word(status, 3)) {
        (Some(enabled), Some(pid)) => (enabled, pid),
        _ => return Err(format!("a status of {} bytes, too short", status.len())),
    };
    let mut audit = Audit {
        enabled,
        auditd_pid,
        rules: rules.len(),
        syscall_rules: 0,
        never_task: false,
    };
    for rule in rules {
        if rule.len() < RULE_FIXED {
            return Err(format!("a rule of {} bytes, too short", rule.len()));
        }
        let (list, action) = (word(rule, 0).unwrap_or(0) & !FILTER_PREPEND, word(rule, 1));
        audit.syscall_rules += usize::from(list == FILTER_ENTRY || list == FILTER_EXIT);
        audit.never_task |= list == FILTER_TASK && action == Some(ACTION_NEVER);
    }
    Ok(audit)
}

/// The netlink messages in `bytes`: (type, payload) each, in order; Err
/// where a header or its length does not fit, or the kernel replied with
/// an error (its errno said).
pub fn messages(mut bytes: &[u8]) -> Result<Vec<(u16, &[u8])>, String> {
    let mut found = Vec::new();
    while !bytes.is_empty() {
        let header = bytes
            .get(..HEADER)
            .ok_or_else(|| format!("a netlink header cut short ({} bytes)", bytes.len()))?;
        let len = u32::from_ne_bytes(header[0..4].try_into().expect("4 bytes")) as usize;
        let kind = u16::from_ne_bytes(header[4..6].try_into().expect("2 bytes"));
        let body = bytes
            .get(HEADER..len.max(HEADER))
            .filter(|_| len >= HEADER)
            .ok_or_else(|| format!("a netlink message of {len} bytes in {}", bytes.len()))?;
        if kind == NLMSG_ERROR {
            let errno = body
                .get(..4)
                .map(|e| i32::from_ne_bytes(e.try_into().expect("4 bytes")))
                .unwrap_or(0);
            if errno != 0 {
                let reason = std::io::Error::from_raw_os_error(-errno);
                return Err(format!("the kernel refused: {reason}"));
            }
        } else {
            found.push((kind, body));
        }
        bytes = bytes.get(len.next_multiple_of(4)..).unwrap_or(&[]);
    }
    Ok(found)
}

/// The live system's audit state; Err says why it cannot be read (a
/// kernel without audit, no permission, a container the kernel keeps
/// audit from).
pub fn read_live() -> Result<Audit, String> {
    // SAFETY: socket returns a new descriptor or -1; OwnedFd closes it.
    let raw = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_AUDIT,
        )
    };
    if raw < 0 {
        return Err(format!(
            "no audit netlink socket ({}): a kernel without audit",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: raw is a descriptor this function owns.
    let socket = unsafe { OwnedFd::from_raw_fd(raw) };
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: a valid descriptor and a timeval of the size given.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let status = exchange(&socket, AUDIT_GET, 1)?;
    let status = status
        .iter()
        .find(|(kind, _)| *kind == AUDIT_GET)
        .map(|(_, body)| body.clone())
        .ok_or("no status in the kernel's reply")?;
    let rules = exchange(&socket, AUDIT_LIST_RULES, 2)?;
    let rules: Vec<&[u8]> = rules
        .iter()
        .filter(|(kind, _)| *kind == AUDIT_LIST_RULES)
        .map(|(_, body)| body.as_slice())
        .collect();
    from_replies(&status, &rules)
}

/// Sends a request of `kind` and reads the replies to it until one that
/// ends it (a status, or the end of a rule listing).
fn exchange(socket: &OwnedFd, kind: u16, seq: u32) -> Result<Vec<(u16, Vec<u8>)>, String> {
    let mut request = [0u8; HEADER];
    request[0..4].copy_from_slice(&(HEADER as u32).to_ne_bytes());
    request[4..6].copy_from_slice(&kind.to_ne_bytes());
    request[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    request[8..12].copy_from_slice(&seq.to_ne_bytes());
    // SAFETY: an all-zero sockaddr_nl addresses the kernel.
    let mut kernel: libc::sockaddr_nl = unsafe { std::mem::zeroed() };
    kernel.nl_family = libc::AF_NETLINK as libc::sa_family_t;
    // SAFETY: the buffer and the address are valid for their sizes.
    let sent = unsafe {
        libc::sendto(
            socket.as_raw_fd(),
            request.as_ptr().cast(),
            request.len(),
            0,
            (&kernel as *const libc::sockaddr_nl).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(format!(
            "the kernel refused the request ({})",
            std::io::Error::last_os_error()
        ));
    }
    let mut replies = Vec::new();
    let mut buffer = vec![0u8; 1 << 16];
    // A listing of many rules comes in several reads; a bound keeps a
    // reply that never ends from holding the run.
    for _ in 0..4096 {
        // SAFETY: the buffer is valid for its length.
        let got = unsafe {
            libc::recv(
                socket.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                buffer.len(),
                0,
            )
        };
        if got < 0 {
            return Err(format!(
                "no reply from the kernel ({})",
                std::io::Error::last_os_error()
            ));
        }
        for (reply, body) in messages(&buffer[..got as usize])? {
            match reply {
                NLMSG_DONE => return Ok(replies),
                AUDIT_GET => {
                    replies.push((reply, body.to_vec()));
                    return Ok(replies);
                }
                _ => replies.push((reply, body.to_vec())),
            }
        }
    }
    Err("the kernel's reply did not end".into())
}
