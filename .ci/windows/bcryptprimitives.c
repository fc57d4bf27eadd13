/* A stand-in for bcryptprimitives.dll, for running Windows test binaries under wine 8.
 *
 * Why it is here: Rust's std (1.78 and later) imports ProcessPrng from
 * bcryptprimitives.dll for its random numbers (HashMap keys), and wine 8 has no such
 * DLL, so every Rust program fails to start under it ("module not found"). This shim
 * exports ProcessPrng over RtlGenRandom (advapi32's SystemFunction036), which wine
 * has. It is test harness only: nothing of ftw links or ships it, and a real Windows
 * host has the real DLL. Built by build.sh with x86_64-w64-mingw32-gcc.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
