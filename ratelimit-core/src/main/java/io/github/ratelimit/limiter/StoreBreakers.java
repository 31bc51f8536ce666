package io.github.ratelimit.limiter;

import java.util.EnumMap;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Algorithm;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.RateLimitStore;
import org.jspecify.annotations.Nullable;

/**
 * The circuit breakers of a store: one per part of a store with parts that fail on their own (the masters of a Redis
 * Cluster), else one per algorithm, each a script of its own on Redis, so that one that fails (a script error, a slow
 * key) does not send the policies of the others to their failure modes.
 */
final class StoreBreakers {

	private static final int MAX_PARTITIONS = 1024;

	private final RateLimitStore store;

	private final int failureThreshold;

	private final long openMillis;

	/** The breaker of a partitioned store's default part. */
	private final CircuitBreaker circuitBreaker;

	private final EnumMap<Algorithm, CircuitBreaker> algorithmBreakers = new EnumMap<>(Algorithm.class);

	/** Whether the store has parts (nodes) that fail on their own, each with a breaker of its own. */
	private final boolean partitioned;

	private final ConcurrentHashMap<String, CircuitBreaker> partitionBreakers = new ConcurrentHashMap<>();

	StoreBreakers(RateLimitStore store, int failureThreshold, long openMillis) {
		this.store = store;
		this.failureThreshold = failureThreshold;
		this.openMillis = openMillis;
		this.circuitBreaker = new CircuitBreaker(failureThreshold, openMillis, "");
		for (Algorithm algorithm : Algorithm.values()) {
			this.algorithmBreakers.put(algorithm, new CircuitBreaker(failureThreshold, openMillis, ""));
		}
		this.partitioned = store.isPartitioned();
	}

	/** The breaker of the policy's algorithm on a store of one part; {@code null} on a store of several. */
	@Nullable CircuitBreaker single(RateLimitPolicy policy) {
		return this.partitioned ? null : this.algorithmBreakers.get(policy.algorithm());
	}

	/**
	 * Return the circuit breaker of one part of a partitioned store, created on first use.
	 */
	private CircuitBreaker breaker(String partition) {
		if (partition.isEmpty()) {
			return this.circuitBreaker;
		}
		CircuitBreaker breaker = this.partitionBreakers.get(partition);
		if (breaker != null) {
			return breaker;
		}
		if (this.partitionBreakers.size() >= MAX_PARTITIONS) {
			// Partitions are nodes; so many means ids that churn (failovers): forget the old ones.
			this.partitionBreakers.clear();
		}
		return this.partitionBreakers.computeIfAbsent(partition,
				(name) -> new CircuitBreaker(this.failureThreshold, this.openMillis, name));
	}

	/** The breaker of the store's part holding the key, or, on a store of one part, of the policy's algorithm. */
	CircuitBreaker of(RateLimitPolicy policy, String key) {
		return this.partitioned ? breaker(this.store.partitionOf(policy, key))
				: Objects.requireNonNull(this.algorithmBreakers.get(policy.algorithm()));
	}

	/** Whether any breaker is open. */
	boolean anyOpen() {
		if (this.circuitBreaker.isOpen()) {
			return true;
		}
		for (CircuitBreaker breaker : this.algorithmBreakers.values()) {
			if (breaker.isOpen()) {
				return true;
			}
		}
		for (CircuitBreaker breaker : this.partitionBreakers.values()) {
			if (breaker.isOpen()) {
				return true;
			}
		}
		return false;
	}

}
