package io.github.ratelimit.engine;

import java.util.concurrent.atomic.AtomicLong;

import org.apache.commons.logging.Log;

/**
 * A warning logged at most once a minute: a failure that every request meets (a resolver or a source that is down)
 * must not flood the log.
 */
final class ThrottledWarning {

	private static final long INTERVAL_NANOS = 60_000_000_000L;

	private final Log logger;

	private final AtomicLong loggedAt = new AtomicLong(System.nanoTime() - INTERVAL_NANOS);

	ThrottledWarning(Log logger) {
		this.logger = logger;
	}

	void warn(String message) {
		long now = System.nanoTime();
		long last = this.loggedAt.get();
		if (now - last >= INTERVAL_NANOS && this.loggedAt.compareAndSet(last, now)) {
			this.logger.warn(message + " (logged at most once a minute)");
		}
	}

}
