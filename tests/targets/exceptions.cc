// SPDX-License-Identifier: MIT
/*
 * exceptions: the ways C++ code raises and catches exceptions, each with a type
 * of its own, for the libstdcxx preset in tests/integration/test_presets.c.
 * Usage: exceptions N          N rounds of every kind below, then prints its
 *                              own account: "KIND=COUNT ..." of throw
 *                              expressions and rethrows run, and catches
 *        exceptions terminate  one exception nothing catches: the default
 *                              terminate handler prints it and aborts
 *        exceptions quiet      the same, under a terminate handler that only
 *                              aborts
 * Kinds, by the type each throws:
 *   Plain     throw, caught as std::exception
 *   Again     throw, caught, `throw;`, caught again
 *   Multi     caught as a base that is not its first one (the handler gets
 *             another address than the thrown object's)
 *   Ptr*      a pointer thrown, caught as a pointer to its base
 *   Inner     thrown, then std::throw_with_nested(Outer) in its handler; the
 *   Outer     nested_exception caught, and rethrow_nested() caught
 *   Stored    thrown, kept in an exception_ptr, later std::rethrow_exception
 *   Promised  thrown on a worker thread, passed by promise::set_exception,
 *             rethrown by future::get() on the main thread
 *   Unwound   thrown; a destructor the unwinding runs throws and catches
 *             another Unwound
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <future>
#include <stdexcept>
#include <thread>

struct Plain : std::runtime_error { Plain() : std::runtime_error("plain") {} };
struct Again : std::runtime_error { Again() : std::runtime_error("again") {} };
struct Tag {
	virtual ~Tag() = default;
	long tag = 1;
};
struct Multi : Tag, std::runtime_error { Multi() : std::runtime_error("multi") {} };
struct Base {
	virtual ~Base() = default;
};
struct Ptr : Tag, Base {};
struct Inner : std::runtime_error { Inner() : std::runtime_error("inner") {} };
struct Outer : std::runtime_error { Outer() : std::runtime_error("outer") {} };
struct Stored : std::runtime_error { Stored() : std::runtime_error("stored") {} };
struct Promised : std::runtime_error { Promised() : std::runtime_error("promised") {} };
struct Unwound : std::runtime_error { Unwound() : std::runtime_error("unwound") {} };
struct Fatal : std::runtime_error { Fatal() : std::runtime_error("fatal") {} };

/* What the program ran, by its own count: throws (throw expressions, rethrows) and catches. */
static long thrown, rethrown, from_ptr, caught;

struct Cleanup {
	~Cleanup()
	{
		try {
			thrown++;
			throw Unwound();
		} catch (const Unwound &) {
			caught++;
		}
	}
};

/* Out of line: the throws must unwind through a call, as real code's do. */
__attribute__((noinline)) static void raise_plain() { thrown++; throw Plain(); }

static void round_once(Ptr *ptr)
{
	try {
		raise_plain();
	} catch (const std::exception &) {
		caught++;
	}
	try {
		try {
			thrown++;
			throw Again();
		} catch (...) {
			caught++;
			rethrown++;
			throw;
		}
	} catch (const Again &) {
		caught++;
	}
	try {
		thrown++;
		throw Multi();
	} catch (const std::exception &) {
		caught++;
	}
	try {
		thrown++;
		throw ptr;
	} catch (Base *) {
		caught++;
	}
	try {
		try {
			thrown++;
			throw Inner();
		} catch (...) {
			caught++;
			thrown++;
			std::throw_with_nested(Outer());
		}
	} catch (const std::nested_exception &e) {
		caught++;
		try {
			from_ptr++;
			e.rethrow_nested();
		} catch (const Inner &) {
			caught++;
		}
	}
	std::exception_ptr kept;
	try {
		thrown++;
		throw Stored();
	} catch (...) {
		caught++;
		kept = std::current_exception();
	}
	try {
		from_ptr++;
		std::rethrow_exception(kept);
	} catch (const Stored &) {
		caught++;
	}
	std::promise<int> promise;
	std::future<int> future = promise.get_future();
	std::thread worker([&promise] {
		try {
			thrown++; /* the main thread waits in get() until it is set */
			throw Promised();
		} catch (...) {
			caught++;
			promise.set_exception(std::current_exception());
		}
	});
	try {
		from_ptr++;
		future.get();
	} catch (const Promised &) {
		caught++;
	}
	worker.join();
	try {
		Cleanup c;
		thrown++;
		throw Unwound();
	} catch (const Unwound &) {
		caught++;
	}
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "1";
	static Ptr ptr;

	if (!strcmp(what, "terminate") || !strcmp(what, "quiet")) {
		if (!strcmp(what, "quiet"))
			std::set_terminate([] { std::abort(); });
		throw Fatal();
	}
	for (int i = 0, n = atoi(what); i < n; i++)
		round_once(&ptr);
	printf("thrown=%ld rethrown=%ld from_exception_ptr=%ld caught=%ld\n", thrown, rethrown,
	       from_ptr, caught);
	return 0;
}
