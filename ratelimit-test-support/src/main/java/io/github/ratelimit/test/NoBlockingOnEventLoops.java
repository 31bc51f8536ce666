package io.github.ratelimit.test;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;

/**
 * Fails a test during which a call that blocks (a wait, a sleep, a socket or file read) ran on a thread that must not
 * block: an event loop of Reactor Netty, a thread of Reactor's parallel scheduler. BlockHound watches every such
 * thread of the JVM from the first test class that uses this extension on; each test then fails with the calls made
 * while it ran, stack traces included, and the class fails with those made after its last test (a settlement that
 * completes after the response, an application context closing).
 * <p>
 * {@code @ExtendWith(NoBlockingOnEventLoops.class)} on the test class; the JVM needs
 * {@code -XX:+AllowRedefinitionToAddDeleteMethods} (surefire's {@code argLine}), as BlockHound does from Java 13 on.
 */
public final class NoBlockingOnEventLoops
		implements BeforeAllCallback, BeforeEachCallback, AfterEachCallback, AfterAllCallback {

	private static final List<String> blocked = new ArrayList<>();

	private static boolean installed;

	@Override
	public void beforeAll(ExtensionContext context) {
		install();
	}

	/** What blocked before this test (in a class without this extension, say) is not this test's. */
	@Override
	public void beforeEach(ExtensionContext context) {
		takeCalls();
	}

	@Override
	public void afterEach(ExtensionContext context) {
		failOn(takeCalls());
	}

	@Override
	public void afterAll(ExtensionContext context) {
		failOn(takeCalls());
	}

	private static List<String> takeCalls() {
		synchronized (blocked) {
			List<String> calls = new ArrayList<>(blocked);
			blocked.clear();
			return calls;
		}
	}

	private static void failOn(List<String> calls) {
		if (!calls.isEmpty()) {
			throw new AssertionError(calls.size() + " blocking call(s) on a thread that must not block:\n"
					+ String.join("\n", calls));
		}
	}

	private static synchronized void install() {
		if (installed) {
			return;
		}
		// loadIntegrations: without them (a plain builder() has none) no thread is known to be non-blocking, and nothing
		// is ever reported.
		BlockHound.builder()
			.loadIntegrations()
			// The in-memory store's key lock yields its time slice after a short spin, in case the holder was
			// descheduled: a hint to the scheduler that waits for nothing, so not a blocking call.
			.allowBlockingCallsInside("io.github.ratelimit.memory.KeyState", "lockContended")
			// Netty's buffer allocator takes a lock of its own when two threads grow its pool at once: Netty's
			// design, on every thread that writes a response, not ours to change.
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			.blockingMethodCallback((method) -> {
				String call = method + " on " + Thread.currentThread().getName() + "\n" + stackOf(new Error());
				synchronized (blocked) {
					blocked.add(call);
				}
			})
			.install();
		installed = true;
	}

	private static String stackOf(Throwable throwable) {
		StringBuilder stack = new StringBuilder();
		for (StackTraceElement element : throwable.getStackTrace()) {
			stack.append("\tat ").append(element).append('\n');
		}
		return stack.toString();
	}

}
