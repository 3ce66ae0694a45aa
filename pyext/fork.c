/*
 * fork.c: the fork gate. The Go runtime does not survive fork() without
 * exec(): in the child of a fork nothing may enter Go. A handler registered
 * when the library is loaded marks every such child; each entry point of
 * the module refuses there (forked(), in ubx_c.h: ForkError), and each Go
 * callback C code may call (a DLPack deleter, a capsule destructor) goes
 * through a gate that skips it, counting what it leaked.
 *
 * Compiled with and without Python (UBX_MODULE): pyext's Go half registers
 * its callbacks through the gate in every build.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "ubx.h"

/* Set in the child of every fork() after this library was loaded; never
 * cleared. Registered by a constructor, at dlopen. */
__attribute__((visibility("hidden"))) volatile sig_atomic_t ubx_fork_flag;

/* Releases a forked child skipped rather than enter Go: what it leaked. */
static long fork_skips;

void fork_skip(void)
{
	__atomic_fetch_add(&fork_skips, 1, __ATOMIC_RELAXED);
}

long ubx_fork_skips(void)
{
	return __atomic_load_n(&fork_skips, __ATOMIC_RELAXED);
}

static void on_fork_child(void)
{
	ubx_fork_flag = 1;
}

__attribute__((constructor)) static void register_fork_handler(void)
{
	pthread_atfork(NULL, NULL, on_fork_child);
}

int ubx_forked(void)
{
	return ubx_fork_flag;
}

/* Gates for Go callbacks: gate_i calls gate_target[i] unless forked. */
#define UBX_GATE_SLOTS 8
static void (*gate_target[UBX_GATE_SLOTS])(void *);
#define UBX_GATE(i)                             \
	static void gate_##i(void *arg)         \
	{                                       \
		if (ubx_fork_flag)              \
			fork_skip();            \
		else                            \
			gate_target[i](arg);    \
	}
UBX_GATE(0) UBX_GATE(1) UBX_GATE(2) UBX_GATE(3) UBX_GATE(4) UBX_GATE(5) UBX_GATE(6) UBX_GATE(7)
static void (*const gate_fns[UBX_GATE_SLOTS])(void *) = {
	gate_0, gate_1, gate_2, gate_3, gate_4, gate_5, gate_6, gate_7,
};
static int gate_count;

uintptr_t ubx_gate(uintptr_t go_fn)
{
	if (gate_count == UBX_GATE_SLOTS)
		return 0;
	gate_target[gate_count] = (void (*)(void *))go_fn;
	return (uintptr_t)gate_fns[gate_count++];
}

#ifdef UBX_MODULE

#include "ubx_c.h"

const char fork_message[] =
	"this module cannot be used in a process created by fork() from one that had already loaded it: "
	"the Go runtime inside it does not survive fork() without exec(). "
	"Start worker processes with the 'spawn' or 'forkserver' method (multiprocessing.get_context('spawn')); "
	"a forkserver must not load the module itself. Objects inherited from the parent are leaked, not freed.";

int fork_raise(void)
{
	PyErr_SetString(g_fork_error != NULL ? g_fork_error : PyExc_RuntimeError, fork_message);
	return 1;
}

#endif /* UBX_MODULE */
