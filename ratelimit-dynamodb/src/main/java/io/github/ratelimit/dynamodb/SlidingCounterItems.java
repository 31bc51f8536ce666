package io.github.ratelimit.dynamodb;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * Sliding window counter on the fixed window's items: the count of the current window's item plus the previous
 * window's count weighted by the part of it the sliding window still covers, decided exactly as in memory
 * ({@code previous·(W - e) + (current + cost)·W ≤ L·W}).
 * <p>
 * A previous window's count no longer changes once it is over and settled (writes of slower clocks or still in flight
 * may land up to {@value #SETTLE_MILLIS} ms after its end), so each instance reads it once per key and window (a
 * strongly consistent {@code GetItem}) and keeps it, reading it at every decision before then; with it known, the estimate becomes a bound on the current
 * count, and the decision is one conditional {@code ADD} on the current item, as for the fixed window. When the
 * bound is already below zero, or the request can never pass, a read answers instead of a write.
 */
final class SlidingCounterItems {

	/** Previous windows' counts kept; past that, the map is emptied (and read again), so a key flood costs reads. */
	static final int MAX_REMEMBERED_WINDOWS = 10_000;

	/**
	 * How long into a window the previous one's count is read again rather than kept: writes of slower clocks and
	 * of calls still in flight may land in it that long after it ended.
	 */
	static final long SETTLE_MILLIS = 2_000;

	private static final Map<String, String> NAMES = Map.of("#c", "count", "#t", "ttl");

	private final ItemKeys keys;

	private final Map<String, Long> previousCounts = new ConcurrentHashMap<>();

	SlidingCounterItems(ItemKeys keys) {
		this.keys = keys;
	}

	CompletableFuture<Decision> decide(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now, long cost) {
		long deadline = calls.deadline();
		long limit = policy.limit();
		long window = policy.windowMillis();
		long start = now - Math.floorMod(now, window);
		long elapsed = now - start;
		String pk = this.keys.window(policy, key, start);
		// A calendar window's time runs up to 32/23 as fast as real time: twice the settling time is never less.
		long settle = (policy.calendar() != null) ? 2 * SETTLE_MILLIS : SETTLE_MILLIS;
		return previousCount(calls, this.keys.window(policy, key, start - window),
				elapsed >= Math.min(settle, window / 2), deadline)
			.thenCompose((previous) -> {
				long budget = limit * window - previous * (window - elapsed);
				long mostCurrent = Math.floorDiv(budget, window) - cost;
				if (cost > limit || mostCurrent < 0) {
					return rejectedAfterRead(calls, pk, deadline, policy, now, cost, start, previous, budget);
				}
				return calls.update(pk, "ADD #c :cost SET #t = :ttl", "attribute_not_exists(#c) OR #c <= :room", NAMES,
						Map.of(":cost", DynamoDbCalls.number(cost), ":ttl", AlgorithmItems.ttl(policy, start + 2 * window),
								":room", DynamoDbCalls.number(mostCurrent)),
						deadline)
					.thenCompose((update) -> {
						if (update.applied()) {
							long current = DynamoDbCalls.number(update.attributes(), "count", cost);
							long remaining = Math.max(0, budget / window - current);
							return CompletableFuture.completedFuture(Decision.allowed(limit, remaining,
									reset(start, window, now, current, previous),
									nextUnit(limit, window, elapsed, current, previous, remaining)));
						}
						if (update.attributes() != null) {
							return CompletableFuture.completedFuture(rejected(policy, now, cost, start, previous,
									budget, DynamoDbCalls.number(update.attributes(), "count", 0)));
						}
						return rejectedAfterRead(calls, pk, deadline, policy, now, cost, start, previous, budget);
					});
			});
	}

	private static CompletableFuture<Decision> rejectedAfterRead(DynamoDbCalls calls, String pk, long deadline,
			RateLimitPolicy policy, long now, long cost, long start, long previous, long budget) {
		return calls.get(pk, deadline).thenApply((item) -> rejected(policy, now, cost, start, previous, budget,
				DynamoDbCalls.number(item, "count", 0)));
	}

	private CompletableFuture<Long> previousCount(DynamoDbCalls calls, String pk, boolean settled, long deadline) {
		Long known = this.previousCounts.get(pk);
		if (known != null) {
			return CompletableFuture.completedFuture(known);
		}
		return calls.get(pk, deadline).thenApply((item) -> {
			long count = DynamoDbCalls.number(item, "count", 0);
			if (settled) {
				if (this.previousCounts.size() >= MAX_REMEMBERED_WINDOWS) {
					this.previousCounts.clear();
				}
				this.previousCounts.put(pk, count);
			}
			return count;
		});
	}

	private static Decision rejected(RateLimitPolicy policy, long now, long cost, long start, long previous,
			long budget, long current) {
		long limit = policy.limit();
		long window = policy.windowMillis();
		long elapsed = now - start;
		long remaining = Math.max(0, budget / window - current);
		long reset = reset(start, window, now, current, previous);
		long next = nextUnit(limit, window, elapsed, current, previous, remaining);
		if (cost > limit) {
			return Decision.rejected(limit, remaining, reset, Decision.NEVER, next);
		}
		long retry;
		if (current + cost <= limit && previous > 0) {
			// Passes later in this window, once the previous window's weight has faded enough.
			retry = window - (limit - current - cost) * window / previous - elapsed;
		}
		else {
			// Passes in the next window, once this window's units (then the previous ones) have faded enough.
			retry = window - elapsed + Math.max(0, window - (limit - cost) * window / Math.max(current, 1));
		}
		return Decision.rejected(limit, remaining, reset, Math.max(1, retry), next);
	}

	/** As {@code SlidingCounter} in memory: when more than {@code remaining} units can have passed at the earliest. */
	private static long nextUnit(long limit, long window, long elapsed, long current, long previous, long remaining) {
		if (previous > 0 && current + remaining + 1 <= limit) {
			return window - (limit - current - remaining - 1) * window / previous - elapsed;
		}
		return window - elapsed + window - (limit - 1) * window / limit;
	}

	private static long reset(long start, long window, long now, long current, long previous) {
		if (current > 0) {
			return start + 2 * window - now;
		}
		return (previous > 0) ? start + window - now : 0;
	}

	/** Return the items a reset deletes. */
	List<String> itemsToReset(RateLimitPolicy policy, String key, long now) {
		long window = policy.windowMillis();
		long start = now - Math.floorMod(now, window);
		return List.of(this.keys.window(policy, key, start - window), this.keys.window(policy, key, start),
				this.keys.window(policy, key, start + window));
	}

	/**
	 * Forget the counts kept of reset items, once they are deleted (so that no decision in between keeps the old
	 * count). Other instances keep theirs: until the previous window drops out of their estimate, at most one window,
	 * they still weigh the count it had.
	 */
	void forget(List<String> items) {
		items.forEach(this.previousCounts::remove);
	}

	void forgetAll() {
		this.previousCounts.clear();
	}


}
