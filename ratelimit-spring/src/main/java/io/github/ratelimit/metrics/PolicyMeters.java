package io.github.ratelimit.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import io.github.ratelimit.Decision;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * One policy's counters, each registered on first use. The two counted on every decision are {@link LongAdder}s
 * that the registry reads when it publishes (function counters): in a CPU profile of the sample app under load,
 * incrementing a registry's own counter (a {@code DoubleAdder}) took 0.3 µs per decision, the most expensive step
 * of {@code @RateLimited}, a {@code LongAdder} a fifth or less. Store failures and shadow rejections are rare and
 * use the registry's counters.
 */
final class PolicyMeters {

	private static final String[] OUTCOMES = { "allowed", "rejected", "rejected_locally", "local_fallback_allowed",
			"local_fallback_rejected", "fail_open", "fail_closed", "shadow_rejected" };

	private final MeterRegistry registry;

	private final String policy;

	/** By outcome; each registered once, as a second registration would read a count nobody increments. */
	private final AtomicReferenceArray<@Nullable LongAdder> decisions = new AtomicReferenceArray<>(OUTCOMES.length);

	private volatile @Nullable LongAdder nearLimit;

	private volatile @Nullable Counter shadowRejections;

	private volatile @Nullable Counter chargesLost;

	private volatile @Nullable Timer waits;

	/** By cause: a small set of exception class names. */
	private final ConcurrentHashMap<String, Counter> storeFailures = new ConcurrentHashMap<>();

	PolicyMeters(MeterRegistry registry, String policy) {
		this.registry = registry;
		this.policy = policy;
	}

	LongAdder decisions(Decision decision, boolean shadow) {
		// A shadow policy rejects nothing: what it would have rejected is an outcome of its own.
		int outcome = (shadow && !decision.allowed()) ? 7 : outcome(decision);
		LongAdder count = this.decisions.get(outcome);
		return (count != null) ? count : registerDecisions(outcome);
	}

	private synchronized LongAdder registerDecisions(int outcome) {
		LongAdder count = this.decisions.get(outcome);
		if (count == null) {
			count = register("ratelimit.decisions", Tags.of("outcome", OUTCOMES[outcome], "policy", this.policy));
			this.decisions.set(outcome, count);
		}
		return count;
	}

	LongAdder nearLimit() {
		LongAdder count = this.nearLimit;
		return (count != null) ? count : registerNearLimit();
	}

	private synchronized LongAdder registerNearLimit() {
		LongAdder count = this.nearLimit;
		if (count == null) {
			count = register("ratelimit.near.limit", Tags.of("policy", this.policy));
			this.nearLimit = count;
		}
		return count;
	}

	private LongAdder register(String name, Tags tags) {
		LongAdder count = new LongAdder();
		// The meter holds the adder weakly; this object holds it for as long as the listener lives.
		FunctionCounter.builder(name, count, LongAdder::sum).tags(tags).register(this.registry);
		return count;
	}

	Counter shadowRejections() {
		Counter counter = this.shadowRejections;
		if (counter == null) {
			counter = Counter.builder("ratelimit.shadow.rejections")
				.tag("policy", this.policy)
				.register(this.registry);
			this.shadowRejections = counter;
		}
		return counter;
	}

	Counter chargesLost() {
		Counter counter = this.chargesLost;
		if (counter == null) {
			counter = Counter.builder("ratelimit.charges.lost")
				.description("Costs settled after the response that the store could not take, even on a second try")
				.tag("policy", this.policy)
				.register(this.registry);
			this.chargesLost = counter;
		}
		return counter;
	}

	Timer waits() {
		Timer timer = this.waits;
		if (timer == null) {
			timer = Timer.builder("ratelimit.wait")
				.description("How long requests over the limit waited for their turn (max-wait)")
				.tag("policy", this.policy)
				.register(this.registry);
			this.waits = timer;
		}
		return timer;
	}

	Counter storeFailures(String cause) {
		return this.storeFailures.computeIfAbsent(cause, (key) -> Counter.builder("ratelimit.store.failures")
			.tag("policy", this.policy)
			.tag("cause", key)
			.register(this.registry));
	}

	/** The index in {@link #OUTCOMES}. */
	private static int outcome(Decision decision) {
		return switch (decision.origin()) {
			case STORE, LEASE, PENALTY -> decision.allowed() ? 0 : 1;
			case DENY_CACHE -> 2;
			case LOCAL_FALLBACK -> decision.allowed() ? 3 : 4;
			case FAIL_OPEN -> 5;
			case FAIL_CLOSED -> 6;
		};
	}

}
