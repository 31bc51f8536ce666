package io.github.ratelimit.engine;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitListener;
import io.github.ratelimit.RateLimitPolicy;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Reports what shadow policies would have rejected: to the listener every time, in the log at most once a minute
 * per policy (with how many since the last line).
 */
final class ShadowReporter {

	private static final Log logger = LogFactory.getLog(ShadowReporter.class);

	private static final long LOG_INTERVAL_NANOS = 60_000_000_000L;

	private static final int MAX_POLICIES = 10_000;

	/** {@link Counts#loggedAt} of a policy never logged. */
	private static final long NEVER = Long.MIN_VALUE;

	private final RateLimitListener listener;

	private final LongSupplier nanoTime;

	private final ConcurrentHashMap<String, Counts> byPolicy = new ConcurrentHashMap<>();

	ShadowReporter(RateLimitListener listener) {
		this(listener, System::nanoTime);
	}

	ShadowReporter(RateLimitListener listener, LongSupplier nanoTime) {
		this.listener = listener;
		this.nanoTime = nanoTime;
	}

	void rejected(RateLimitPolicy policy, Decision decision) {
		this.listener.onShadowRejection(policy, decision);
		if (this.byPolicy.size() > MAX_POLICIES) {
			this.byPolicy.clear(); // policy names are the application's, not the client's: this is a safety net
		}
		Counts counts = this.byPolicy.computeIfAbsent(policy.name(), (name) -> new Counts());
		long since = counts.rejected.incrementAndGet();
		long now = this.nanoTime.getAsLong();
		long last = counts.loggedAt.get();
		if ((last == NEVER || now - last >= LOG_INTERVAL_NANOS) && counts.loggedAt.compareAndSet(last, now)) {
			counts.rejected.addAndGet(-since);
			logger.info("Rate limit policy '" + policy.name() + "' (shadow mode, " + policy.describe()
					+ ") would have rejected " + since + " request(s) since its last report; it rejects none until its "
					+ "mode is enforce (reported at most once a minute)");
		}
	}

	private static final class Counts {

		final AtomicLong rejected = new AtomicLong();

		final AtomicLong loggedAt = new AtomicLong(NEVER);

	}

}
