//! The process: its handle limit, address space and CPU time.

use super::stat::filetime;

use windows_sys::Win32::Foundation as wf;

/// The effective user id of this process: Windows has none (`None`).
pub fn effective_uid() -> Option<u32> {
    None
}

/// The limit on open handles: Windows has none that matters (16 million).
pub fn fd_limit() -> Option<u64> {
    None
}

/// How many handles this process has open: not counted here, where [`fd_limit`] sets
/// no limit to compare them with.
pub(crate) fn open_fds() -> Option<usize> {
    None
}

/// The address space this process may still map under a limit: no such limit here.
pub fn address_space_room() -> Option<u64> {
    None
}

/// CPU time used so far by every thread of this process (`GetProcessTimes`).
pub fn process_cpu_time() -> std::time::Duration {
    let zero = wf::FILETIME::default();
    let (mut c, mut e, mut k, mut u) = (zero, zero, zero, zero);
    // SAFETY: four live FILETIMEs to write; the pseudo-handle of this process.
    let ok = unsafe {
        windows_sys::Win32::System::Threading::GetProcessTimes(
            windows_sys::Win32::System::Threading::GetCurrentProcess(),
            &mut c,
            &mut e,
            &mut k,
            &mut u,
        )
    };
    if ok == 0 {
        return std::time::Duration::ZERO;
    }
    let ticks = filetime(k) as u64 + filetime(u) as u64;
    std::time::Duration::from_nanos(ticks.saturating_mul(100))
}
