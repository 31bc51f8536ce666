package io.github.ratelimit.client;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.web.RateLimitException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.ErrorResponseException;

/**
 * One policy on outbound calls: decides each call before it is sent, and learns from each response what the called
 * service asks (see {@link OutboundRateLimits}).
 */
final class OutboundPolicy {

	private static final Log logger = LogFactory.getLog(OutboundRateLimits.class);

	/** The most hosts held off at once: past it, the hold-offs that ended are dropped, then new ones are not kept. */
	static final int MAX_HELD_OFF_HOSTS = 10_000;

	/** The least time between two changes of the limit from what callees announce: one store write a second. */
	private static final long CHANGE_INTERVAL_NANOS = 1_000_000_000L;

	private final RateLimitEngine engine;

	private final @Nullable RuntimeChanges changes;

	private final String name;

	/** The policy, or {@code null} when it is disabled ({@code enabled=false}): every call passes then. */
	private final @Nullable PolicySpec spec;

	/** The limit as declared: a callee may lower it, never raise it above this. */
	private final long declaredLimit;

	/** By host, until when ({@link System#nanoTime()}) calls to it are held off. */
	private final Map<String, Long> heldOff = new ConcurrentHashMap<>();

	private final AtomicLong lastChange = new AtomicLong(System.nanoTime() - CHANGE_INTERVAL_NANOS);

	OutboundPolicy(RateLimitEngine engine, @Nullable RuntimeChanges changes, String name) {
		this.engine = engine;
		this.changes = changes;
		this.name = name;
		this.spec = engine.catalog().declare(name, "outbound calls under policy '" + name + "'", PolicyValues.NONE);
		if (this.spec != null && this.spec.policy().algorithm() == Algorithm.CONCURRENCY) {
			throw new InvalidRateLimitPolicyException(name, "'algorithm' CONCURRENCY cannot limit outbound calls: a "
					+ "call's slot would be given back as soon as it was taken; use a rate (FIXED, SLIDING_LOG, "
					+ "TOKEN_BUCKET, ...)");
		}
		this.declaredLimit = (this.spec != null) ? this.spec.policy().limit() : 0;
	}

	/**
	 * Take a unit for a call to the host, waiting up to the policy's {@code max-wait} for its turn.
	 * @return a stage that completes when the call may be sent, or exceptionally with
	 * {@link OutboundRateLimitException}
	 */
	CompletionStage<Void> acquire(String host) {
		PolicySpec spec = this.spec;
		if (spec == null) {
			return CompletableFuture.completedFuture(null);
		}
		Long until = this.heldOff.get(host);
		if (until != null) {
			long left = until - System.nanoTime();
			if (left > 0) {
				return CompletableFuture.failedFuture(
						new OutboundRateLimitException(this.name, host, Duration.ofNanos(left)));
			}
			this.heldOff.remove(host, until);
		}
		return this.engine.decideKeyAsync(spec, host, null).thenApply((outcome) -> {
			ErrorResponseException rejection = outcome.rejection();
			if (rejection != null) {
				long seconds = (rejection instanceof RateLimitException refused) ? refused.getRetryAfterSeconds() : 1;
				throw new OutboundRateLimitException(this.name, host, Duration.ofSeconds(Math.max(1, seconds)));
			}
			return null;
		});
	}

	/** Read what the called service said of its limits: hold off, or follow its quota. */
	void learn(String host, HttpStatusCode status, HttpHeaders headers) {
		PolicySpec spec = this.spec;
		if (spec == null) {
			return;
		}
		CalleeLimits limits = CalleeLimits.of(status, headers);
		if (limits.holdOffSeconds() > 0) {
			holdOff(host, limits.holdOffSeconds());
		}
		CalleeLimits.Quota quota = limits.quota();
		if (quota != null) {
			follow(spec.policy(), host, quota);
		}
	}

	private void holdOff(String host, long seconds) {
		long until = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		if (this.heldOff.size() >= MAX_HELD_OFF_HOSTS) {
			long now = System.nanoTime();
			this.heldOff.values().removeIf((end) -> end - now <= 0);
			if (this.heldOff.size() >= MAX_HELD_OFF_HOSTS) {
				return; // the policy's own limit still counts every call
			}
		}
		this.heldOff.merge(host, until, Math::max);
	}

	/**
	 * Bring the policy's limit to the callee's quota over the policy's window, never above the limit declared: on
	 * every instance, as a run-time change, at most once a second.
	 */
	private void follow(RateLimitPolicy policy, String host, CalleeLimits.Quota quota) {
		RuntimeChanges changes = this.changes;
		if (changes == null) {
			return;
		}
		long perWindow;
		try {
			perWindow = Math.multiplyExact(quota.limit(), policy.windowMillis())
					/ Math.multiplyExact(quota.windowSeconds(), 1000L);
		}
		catch (ArithmeticException ex) {
			perWindow = (long) Math.floor(quota.perSecond() * policy.windowMillis() / 1000.0);
		}
		long target = Math.max(1, Math.min(this.declaredLimit, perWindow));
		if (target == policy.limit()) {
			return;
		}
		long last = this.lastChange.get();
		long now = System.nanoTime();
		if (now - last < CHANGE_INTERVAL_NANOS || !this.lastChange.compareAndSet(last, now)) {
			return;
		}
		try {
			Map<String, String> change = (target == this.declaredLimit) ? Map.of()
					: Map.of("limit", Long.toString(target));
			changes.change(this.name, change, "the quota of " + host);
			logger.info("Rate limit policy '" + this.name + "' of outbound calls follows the quota " + host
					+ " announced (" + quota.limit() + " per " + quota.windowSeconds() + " s): " + target + " per "
					+ policy.describeWindow());
		}
		catch (RuntimeException ex) {
			logger.warn("Rate limit policy '" + this.name + "' of outbound calls could not follow the quota " + host
					+ " announced: " + ex.getMessage());
		}
	}

}
