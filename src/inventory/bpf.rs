//! The BPF programs loaded, by type and name, read through the bpf
//! syscall's iteration (BPF_PROG_GET_NEXT_ID, then each program's info by
//! a descriptor that is closed at once); read-only. A program on a
//! syscall tracepoint, a kprobe or an LSM hook runs on the paths it hooks,
//! as runtime security agents attach theirs.
//!
//! Three commands and the head of one kernel struct are read here: aya
//! (whose `loaded_programs` does this) would bring a whole BPF loader for
//! a listing.

use serde::{Deserialize, Serialize};
use std::os::fd::{FromRawFd, OwnedFd};

const BPF_PROG_GET_NEXT_ID: libc::c_long = 11;
const BPF_PROG_GET_FD_BY_ID: libc::c_long = 13;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
/// `struct bpf_prog_info` up to and with its name: type, id, then the
/// name's 16 bytes at 64.
const INFO_HEAD: usize = 80;
const NAME_AT: usize = 64;

/// One loaded program.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Program {
    /// The program type's name ("kprobe", "tracepoint", "lsm"), or its
    /// number where this build does not know it.
    pub kind: String,
    /// The name it was loaded under (at most 15 bytes), empty where none.
    pub name: String,
}

impl std::fmt::Display for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name.is_empty() {
            true => write!(f, "{} (unnamed)", self.kind),
            false => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// Whether programs of `kind` run on the syscall path or the kernel's
/// functions: tracepoints (syscall ones among them), kprobes, fentry and
/// fexit (`tracing`), LSM hooks, perf events.
pub fn on_kernel_paths(kind: &str) -> bool {
    matches!(
        kind,
        "kprobe"
            | "tracepoint"
            | "raw_tracepoint"
            | "raw_tracepoint_writable"
            | "tracing"
            | "lsm"
            | "perf_event"
    )
}

/// The program type's name, as the kernel's `enum bpf_prog_type` orders
/// them (uapi/linux/bpf.h).
fn kind_name(kind: u32) -> String {
    const KINDS: [&str; 33] = [
        "unspec",
        "socket_filter",
        "kprobe",
        "sched_cls",
        "sched_act",
        "tracepoint",
        "xdp",
        "perf_event",
        "cgroup_skb",
        "cgroup_sock",
        "lwt_in",
        "lwt_out",
        "lwt_xmit",
        "sock_ops",
        "sk_skb",
        "cgroup_device",
        "sk_msg",
        "raw_tracepoint",
        "cgroup_sock_addr",
        "lwt_seg6local",
        "lirc_mode2",
        "sk_reuseport",
        "flow_dissector",
        "cgroup_sysctl",
        "raw_tracepoint_writable",
        "cgroup_sockopt",
        "tracing",
        "struct_ops",
        "ext",
        "lsm",
        "sk_lookup",
        "syscall",
        "netfilter",
    ];
    KINDS
        .get(kind as usize)
        .map_or_else(|| format!("type {kind}"), |k| k.to_string())
}

/// A program from the head of its `struct bpf_prog_info`; Err where the
/// kernel gave less than the head.
pub fn program_from_info(info: &[u8]) -> Result<Program, String> {
    if info.len() < INFO_HEAD {
        return Err(format!(
            "a program's info of {} bytes, too short",
            info.len()
        ));
    }
    let kind = u32::from_ne_bytes(info[0..4].try_into().expect("4 bytes"));
    let name = &info[NAME_AT..NAME_AT + 16];
    let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(16)];
    Ok(Program {
        kind: kind_name(kind),
        name: String::from_utf8_lossy(name).into_owned(),
    })
}

/// The bpf syscall with `attr` of `N` bytes; the raw result.
fn bpf<const N: usize>(cmd: libc::c_long, attr: &mut [u8; N]) -> libc::c_long {
    // SAFETY: attr is valid for N bytes, the size the kernel is told.
    unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), N) }
}

/// Every program loaded on the live system, sorted; Err says why none
/// can be listed (a kernel without the bpf syscall, no permission).
pub fn read_live() -> Result<Vec<Program>, String> {
    let mut programs = Vec::new();
    let mut id = 0u32;
    loop {
        let mut next = [0u8; 12];
        next[0..4].copy_from_slice(&id.to_ne_bytes());
        if bpf(BPF_PROG_GET_NEXT_ID, &mut next) != 0 {
            let error = std::io::Error::last_os_error();
            if error.raw_os_error() == Some(libc::ENOENT) {
                break;
            }
            return Err(format!(
                "the bpf syscall refused to list programs ({error})"
            ));
        }
        id = u32::from_ne_bytes(next[4..8].try_into().expect("4 bytes"));
        let mut by_id = [0u8; 12];
        by_id[0..4].copy_from_slice(&id.to_ne_bytes());
        let fd = bpf(BPF_PROG_GET_FD_BY_ID, &mut by_id);
        if fd < 0 {
            // Unloaded since it was listed.
            continue;
        }
        // SAFETY: the kernel returned a new descriptor this owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let mut info = [0u8; INFO_HEAD];
        let mut get = [0u8; 16];
        get[0..4].copy_from_slice(&(std::os::fd::AsRawFd::as_raw_fd(&fd) as u32).to_ne_bytes());
        get[4..8].copy_from_slice(&(INFO_HEAD as u32).to_ne_bytes());
        get[8..16].copy_from_slice(&(info.as_mut_ptr() as u64).to_ne_bytes());
        if bpf(BPF_OBJ_GET_INFO_BY_FD, &mut get) != 0 {
            continue;
        }
        programs.push(program_from_info(&info)?);
    }
    programs.sort();
    Ok(programs)
}
