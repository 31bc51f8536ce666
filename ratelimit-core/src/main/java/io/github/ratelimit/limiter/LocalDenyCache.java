package io.github.ratelimit.limiter;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import org.jspecify.annotations.Nullable;

/**
 * Remembers, per key, until when a remote store has rejected it, so that a client hammering past its limit is
 * rejected by this instance without a round trip.
 * <p>
 * A denial learned from a request that started at {@code t} and was told to retry after {@code d} lasts until
 * {@code t + d}: since the store decided after {@code t}, its own retry time is no earlier, so this instance does not
 * reject longer than the store would, as long as the store keeps the key's state (a store that loses its data, such
 * as a Redis restarted without persistence, tells its reset listeners, which clear this cache). It never admits
 * anything either: it only rejects, and only requests that cost at least as much as the rejected one (a cheaper one
 * might fit). Capacity only comes back with time, and other
 * instances only consume more, so the store would reject them too. If the clock runs backwards, a denial is dropped.
 */
final class LocalDenyCache {

	private final int maxKeys;

	private final Map<RateLimitPolicy, ConcurrentHashMap<String, Denial>> denials = new ConcurrentHashMap<>();

	private final AtomicInteger size = new AtomicInteger();

	/** No denial ends before this time, so a purge before it would find nothing. */
	private final AtomicLong nextPurgeAt = new AtomicLong(Long.MAX_VALUE);

	LocalDenyCache(int maxKeys) {
		this.maxKeys = maxKeys;
	}

	/**
	 * Return a local rejection if the store is known to reject this request now, else {@code null}.
	 */
	@Nullable Decision check(RateLimitPolicy policy, String key, long cost, long now) {
		ConcurrentHashMap<String, Denial> table = this.denials.get(policy);
		if (table == null) {
			return null;
		}
		Denial denial = table.get(key);
		if (denial == null) {
			return null;
		}
		if (now >= denial.until || now < denial.learnedAt) {
			if (table.remove(key, denial)) {
				this.size.decrementAndGet();
				dropIfEmpty(policy, table);
			}
			return null;
		}
		if (cost < denial.cost || cost > policy.capacity()) {
			return null; // a cheaper request might fit; one that can never fit deserves the store's exact answer
		}
		return new Decision(false, denial.limit, denial.remaining, Math.max(0, denial.resetAt - now),
				denial.until - now, Math.max(0, Math.min(denial.nextUnitAt, denial.until) - now),
				Decision.Origin.DENY_CACHE);
	}

	/**
	 * Remember a rejection by the store of a request that started at {@code startedAt}.
	 */
	void remember(RateLimitPolicy policy, String key, long cost, Decision decision, long startedAt) {
		if (decision.retryAfterMillis() <= 0) {
			return;
		}
		ConcurrentHashMap<String, Denial> table = this.denials.get(policy);
		if (table == null) {
			table = this.denials.computeIfAbsent(policy, (p) -> new ConcurrentHashMap<>());
		}
		Denial denial = new Denial(startedAt, startedAt + decision.retryAfterMillis(),
				startedAt + decision.resetAfterMillis(), startedAt + decision.nextUnitAfterMillis(), cost,
				decision.limit(), decision.remaining());
		if (this.size.get() >= this.maxKeys && (startedAt < this.nextPurgeAt.get() || purge(startedAt) == 0)) {
			return;
		}
		if (table.put(key, denial) == null) {
			this.size.incrementAndGet();
		}
		if (denial.until < this.nextPurgeAt.get()) {
			this.nextPurgeAt.accumulateAndGet(denial.until, Math::min);
		}
	}

	/**
	 * Forget the denial of one key, if any.
	 */
	void evict(RateLimitPolicy policy, String key) {
		ConcurrentHashMap<String, Denial> table = this.denials.get(policy);
		if (table != null) {
			evict(table, key);
			dropIfEmpty(policy, table);
		}
	}

	/**
	 * Drop a policy none of whose keys is denied any more (a tenant's variant gone quiet). A denial remembered in it
	 * meanwhile is lost, which only sends that request to the store.
	 */
	private void dropIfEmpty(RateLimitPolicy policy, ConcurrentHashMap<String, Denial> table) {
		if (table.isEmpty()) {
			this.denials.remove(policy, table);
		}
	}

	/** How many policies have denials remembered. */
	int policies() {
		return this.denials.size();
	}

	/**
	 * Forget the denials of one key under every parameter set of a policy's name and variant: a reset made through
	 * another instance, which knows the name and variant only.
	 */
	void evict(String name, String variant, String key) {
		this.denials.forEach((policy, table) -> {
			if (policy.name().equals(name) && policy.variant().equals(variant)) {
				evict(table, key);
			}
		});
	}

	/**
	 * Forget every denial.
	 */
	void clear() {
		for (ConcurrentHashMap<String, Denial> table : this.denials.values()) {
			for (String key : table.keySet()) {
				evict(table, key);
			}
		}
	}

	private void evict(ConcurrentHashMap<String, Denial> table, String key) {
		if (table.remove(key) != null) {
			this.size.decrementAndGet();
		}
	}

	int size() {
		return this.size.get();
	}

	private synchronized int purge(long now) {
		int purged = 0;
		long earliest = Long.MAX_VALUE;
		for (ConcurrentHashMap<String, Denial> table : this.denials.values()) {
			for (Iterator<Map.Entry<String, Denial>> entries = table.entrySet().iterator(); entries.hasNext();) {
				Map.Entry<String, Denial> entry = entries.next();
				Denial denial = entry.getValue();
				if ((now >= denial.until || now < denial.learnedAt) && table.remove(entry.getKey(), denial)) {
					this.size.decrementAndGet();
					purged++;
				}
				else {
					earliest = Math.min(earliest, denial.until);
				}
			}
		}
		// A policy none of whose keys is denied any more (a tenant's variant gone quiet) takes no room.
		this.denials.values().removeIf(ConcurrentHashMap::isEmpty);
		this.nextPurgeAt.set(earliest);
		return purged;
	}

	private record Denial(long learnedAt, long until, long resetAt, long nextUnitAt, long cost, long limit,
			long remaining) {
	}

}
