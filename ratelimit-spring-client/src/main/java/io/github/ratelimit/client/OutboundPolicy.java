package io.github.ratelimit.client;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.PolicySpec;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.web.RateLimitException;
import io.github.ratelimit.web.RateLimitUnavailableException;
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

	/** The most hosts held off at once: past it, the hold-off that ends soonest makes room. */
	static final int MAX_HELD_OFF_HOSTS = 10_000;

	/** Who the changes that follow a callee's quota are made by: they are told from an operator's by it. */
	static final String FOLLOWER = "the quota of ";

	/** The least time between two changes of the limit from what callees announce: one store write a second. */
	private static final long CHANGE_INTERVAL_NANOS = 1_000_000_000L;

	private final @Nullable RuntimeChanges changes;

	private final @Nullable RateLimitEngine engine;

	private final String name;

	/** The policy, or {@code null} when it is disabled ({@code enabled=false}): every call passes then. */
	private final @Nullable PolicySpec spec;

	/** By host, until when ({@link System#nanoTime()}) calls to it are held off. */
	private final Map<String, Long> heldOff = new ConcurrentHashMap<>();

	/** The hosts called, up to two: a policy follows the quota of the one host it calls, never of several. */
	private final Set<String> hosts = ConcurrentHashMap.newKeySet();

	private final AtomicBoolean severalHostsLogged = new AtomicBoolean();

	private final AtomicLong lastChange = new AtomicLong(System.nanoTime() - CHANGE_INTERVAL_NANOS);

	/** A policy of the engine's, or one that limits nothing without an engine (limits switched off). */
	OutboundPolicy(@Nullable RateLimitEngine engine, @Nullable RuntimeChanges changes, String name) {
		this.engine = engine;
		this.changes = changes;
		this.name = name;
		this.spec = (engine != null)
				? engine.catalog().declare(name, "outbound calls under policy '" + name + "'", PolicyValues.NONE) : null;
		if (this.spec != null && this.spec.policy().algorithm() == Algorithm.CONCURRENCY) {
			throw new InvalidRateLimitPolicyException(name, "'algorithm' CONCURRENCY cannot limit outbound calls: a "
					+ "call's slot would be given back as soon as it was taken; use a rate (FIXED, SLIDING_LOG, "
					+ "TOKEN_BUCKET, ...)");
		}
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
		long left = heldOffFor(host);
		if (left > 0) {
			return CompletableFuture.failedFuture(new OutboundRateLimitException(this.name, host, Duration.ofNanos(left),
					false));
		}
		return Objects.requireNonNull(this.engine).decideKeyAsync(spec, host, null).thenApply((outcome) -> {
			ErrorResponseException rejection = outcome.rejection();
			if (rejection != null) {
				long seconds = (rejection instanceof RateLimitException refused) ? refused.getRetryAfterSeconds() : 1;
				throw new OutboundRateLimitException(this.name, host, Duration.ofSeconds(Math.max(1, seconds)),
						rejection instanceof RateLimitUnavailableException);
			}
			// A hold-off the service asked for while this call waited for its turn.
			long since = heldOffFor(host);
			if (since > 0) {
				throw new OutboundRateLimitException(this.name, host, Duration.ofNanos(since), false);
			}
			return null;
		});
	}

	private long heldOffFor(String host) {
		Long until = this.heldOff.get(host);
		if (until == null) {
			return 0;
		}
		long left = until - System.nanoTime();
		if (left <= 0) {
			this.heldOff.remove(host, until);
		}
		return left;
	}

	/** Read what the called service said of its limits: hold off, or follow its quota. */
	void learn(String host, HttpStatusCode status, HttpHeaders headers) {
		PolicySpec spec = this.spec;
		if (spec == null) {
			return;
		}
		boolean onlyHost = callsOnlyTo(host);
		CalleeLimits limits = CalleeLimits.of(status, headers, System.currentTimeMillis());
		if (limits.holdOffSeconds() > 0) {
			holdOff(host, limits.holdOffSeconds());
		}
		CalleeLimits.Quota quota = limits.quota();
		if (quota != null && onlyHost) {
			follow(spec, host, quota);
		}
	}

	private void holdOff(String host, long seconds) {
		long until = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		if (this.heldOff.size() >= MAX_HELD_OFF_HOSTS && !this.heldOff.containsKey(host)) {
			long now = System.nanoTime();
			this.heldOff.values().removeIf((end) -> end - now <= 0);
			if (this.heldOff.size() >= MAX_HELD_OFF_HOSTS) {
				// Full of hosts held off: the one whose hold-off ends soonest makes room, so that a flood of hosts
				// held off for long cannot keep a real service's Retry-After out.
				this.heldOff.entrySet()
					.stream()
					.min(Map.Entry.comparingByValue((a, b) -> Long.compare(a - now, b - now)))
					.ifPresent((soonest) -> this.heldOff.remove(soonest.getKey(), soonest.getValue()));
			}
		}
		this.heldOff.merge(host, until, (a, b) -> (a - b > 0) ? a : b);
	}

	/** Whether every call of this policy went to this host: quotas of several hosts are not one. */
	private boolean callsOnlyTo(String host) {
		if (this.hosts.size() < 2) {
			this.hosts.add(host);
		}
		boolean one = this.hosts.size() == 1;
		if (!one && this.severalHostsLogged.compareAndSet(false, true)) {
			logger.info("Rate limit policy '" + this.name + "' of outbound calls calls several hosts: it follows the "
					+ "quota none of them announces (their quotas are not one)");
		}
		return one;
	}

	/**
	 * Bring the policy's limit to the callee's quota, never above the limit configured: on every instance, as a
	 * run-time change of the limit (and a bucket's burst) alone, at most once a second, off the calling thread. An
	 * operator's change of the policy is in charge: it is never replaced.
	 */
	private void follow(PolicySpec spec, String host, CalleeLimits.Quota quota) {
		RuntimeChanges changes = this.changes;
		RateLimitPolicy policy = spec.policy();
		RateLimitPolicy declared = spec.declaredPolicy();
		if (changes == null || policy.calendar() != null) {
			return;
		}
		RuntimeChanges.StoredChange existing = changes.storedChanges().get(this.name);
		String author = (existing != null) ? existing.changedBy() : null;
		if (existing != null && (author == null || !author.startsWith(FOLLOWER))) {
			return; // an operator's
		}
		long target = Math.max(1, Math.min(declared.limit(), perWindow(quota, policy.windowMillis())));
		Map<String, String> change = (target >= declared.limit()) ? Map.of()
				: policy.algorithm().isBucket()
						? Map.of("limit", Long.toString(target), "burst",
								Long.toString(Math.min(declared.burst(), target)))
						: Map.of("limit", Long.toString(target));
		if (change.equals((existing != null) ? existing.values() : Map.of())) {
			return;
		}
		long last = this.lastChange.get();
		long now = System.nanoTime();
		if (now - last < CHANGE_INTERVAL_NANOS || !this.lastChange.compareAndSet(last, now)) {
			return;
		}
		// Off the calling thread: a WebClient's is an event loop, and the change is written to the store.
		CompletableFuture.runAsync(() -> {
			try {
				changes.change(this.name, change, FOLLOWER + host);
				logger.info("Rate limit policy '" + this.name + "' of outbound calls follows the quota " + host
						+ " announced (" + quota.limit() + " per " + quota.windowSeconds() + " s): "
						+ (change.isEmpty() ? "its limit as configured" : change.get("limit") + " per "
								+ policy.describeWindow()));
			}
			catch (RuntimeException ex) {
				logger.warn("Rate limit policy '" + this.name + "' of outbound calls could not follow the quota "
						+ host + " announced: " + ex.getMessage());
			}
		});
	}

	/**
	 * The quota over the policy's window, never more than it allows in any of its own windows: scaled down to a
	 * shorter window of the policy, kept whole over a longer one (allowing its whole quota in each of the policy's
	 * windows would let it all go in the first of its own).
	 */
	static long perWindow(CalleeLimits.Quota quota, long windowMillis) {
		long calleeMillis = quota.windowSeconds() * 1000;
		if (calleeMillis < windowMillis) {
			return quota.limit();
		}
		try {
			return Math.multiplyExact(quota.limit(), windowMillis) / calleeMillis;
		}
		catch (ArithmeticException ex) {
			return (long) Math.floor((double) quota.limit() * windowMillis / calleeMillis);
		}
	}

}
