package io.github.ratelimit.limiter;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;

/**
 * Logs at most once per interval and says how many occurrences were not logged in between.
 */
final class ThrottledLogger {

	private final Logger logger;

	private final long intervalMillis;

	private final AtomicLong lastLoggedAt = new AtomicLong(Long.MIN_VALUE);

	private final AtomicLong suppressed = new AtomicLong();

	ThrottledLogger(Logger logger, long intervalMillis) {
		this.logger = logger;
		this.intervalMillis = intervalMillis;
	}

	/**
	 * Log unless a message was logged less than an interval ago.
	 * @param level the level
	 * @param now the current time in milliseconds
	 * @param message the message, given the number of occurrences not logged since the last message
	 * @param failure the cause to log, may be {@code null}
	 */
	void log(Level level, long now, LongFunction<String> message, @org.jspecify.annotations.Nullable Throwable failure) {
		long last = this.lastLoggedAt.get();
		boolean due = last == Long.MIN_VALUE || now < last || now - last >= this.intervalMillis;
		if (due && this.lastLoggedAt.compareAndSet(last, now)) {
			long skipped = this.suppressed.getAndSet(0);
			if (this.logger.isLoggable(level)) {
				this.logger.log(level, message.apply(skipped), failure);
			}
		}
		else {
			this.suppressed.incrementAndGet();
		}
	}

}
