package io.github.ratelimit.dynamodb;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Token bucket (and leaky bucket, the same meter) in one item per key, seen as the leaky bucket's level in the exact
 * integer units of {@link RateLimitPolicy#unitsPerToken()}: the level at time {@code t} is
 * {@code max(0, level - (t - base)·R)}, with {@code level} and {@code base} stored, and the bucket's tokens are
 * {@code B·T} minus the level. An admission raises the level by {@code cost·T}.
 * <p>
 * A decision reads the item (strongly consistent) and, if the request passes, writes on condition that what it read
 * still holds:
 * <ul>
 * <li>while the level is above zero: {@code ADD #level :cost·T}, on condition that {@code base} is unchanged and the
 * level still leaves room, so concurrent takers of one key do not conflict, however fast the bucket refills;
 * <li>once it has drained to zero (a full bucket): {@code SET level} to what has drained plus the request's units,
 * on condition that it still is drained; of concurrent writers one wins and the others, reading again, add.
 * </ul>
 * The stored level only ever grows and {@code base} stays (but for a new key, and a rare restart when the numbers
 * have grown large), so an add computed by one decision stays valid whatever others write meanwhile: conditions fail
 * only when the bucket is out of tokens.
 * The item keeps the units of a token and per millisecond it was counted in ({@code pt}, {@code pm}). Under another
 * limit or burst (a change of the policy), what was used is kept in whole tokens (a part counts as a whole), clamped
 * to the new burst, and the first admission rewrites the item in the new units, on condition that it is unchanged.
 * <p>
 * A failed condition means another decision got there first: read again, at most {@value #MAX_ATTEMPTS} times. A
 * rejection writes nothing (one read unit). Time never runs backwards for a key: a decision counts from the later of
 * its clock and {@code base}.
 */
final class TokenBucketItems {

	static final int MAX_ATTEMPTS = 8;

	private static final Map<String, String> NAMES = Map.of("#x", "level", "#b", "base", "#t", "ttl", "#p", "pt");

	private static final Map<String, String> ALL_NAMES = Map.of("#x", "level", "#b", "base", "#t", "ttl", "#p", "pt",
			"#m", "pm");

	private final ItemKeys keys;

	TokenBucketItems(ItemKeys keys) {
		this.keys = keys;
	}

	CompletableFuture<Decision> decide(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now, long cost) {
		return attempt(calls, policy, key, now, cost, calls.deadline(), 0);
	}

	/** One read and, when the request passes, one conditional write; another attempt when the write conflicted. */
	private CompletableFuture<Decision> attempt(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now,
			long cost, long deadline, int attempt) {
		if (attempt >= MAX_ATTEMPTS) {
			return DynamoDbCalls.conflicted(policy, key, MAX_ATTEMPTS);
		}
		String pk = this.keys.bucket(policy, key);
		long perToken = policy.unitsPerToken();
		long perMilli = policy.unitsPerMilli();
		long burst = policy.burst();
		long capacity = burst * perToken;
		long need = cost * perToken;
		return calls.get(pk, deadline).thenCompose((item) -> {
			boolean exists = item.containsKey("level") && item.containsKey("base");
			long stored = DynamoDbCalls.number(item, "level", 0);
			long base = DynamoDbCalls.number(item, "base", now);
			long countedPerToken = DynamoDbCalls.number(item, "pt", perToken);
			long countedPerMilli = DynamoDbCalls.number(item, "pm", perMilli);
			boolean changed = exists && (countedPerToken != perToken || countedPerMilli != perMilli);
			long t = Math.max(now, base);
			long drained = saturatingMultiply(t - base, changed ? countedPerMilli : perMilli);
			long drainedLevel = (!exists || stored <= drained) ? 0 : stored - drained;
			long level = changed ? Math.min(capacity, ceilDiv(drainedLevel, countedPerToken) * perToken) : drainedLevel;
			long tokens = Math.max(0, capacity - level);
			// Above the capacity, the level is a debt (a cost charged after the response): waits count it whole.
			long reset = ceilDiv(level, perMilli);
			long next = ceilDiv(perToken - tokens % perToken, perMilli);
			AttributeValue ttl = DynamoDbCalls.ttl(t + ceilDiv(capacity, perMilli));
			AttributeValue units = DynamoDbCalls.number(perToken);
			AttributeValue rate = DynamoDbCalls.number(perMilli);
			if (cost > burst || tokens < need) {
				Decision rejected = Decision.rejected(burst, tokens / perToken, reset,
						(cost > burst) ? Decision.NEVER : ceilDiv(need - (capacity - level), perMilli), next);
				if (!changed) {
					return done(rejected);
				}
				// The first decision under a changed limit or burst rewrites the item in its units, so that it
				// refills at the new rate from now on; whoever rewrote it first wins.
				return calls.update(pk, "SET #x = :x, #b = :b, #t = :ttl, #p = :pt, #m = :pm",
						"#b = :base AND #x = :stored", ALL_NAMES,
						Map.of(":x", DynamoDbCalls.number(level), ":b", DynamoDbCalls.number(t), ":ttl", ttl, ":base",
								DynamoDbCalls.number(base), ":stored", DynamoDbCalls.number(stored), ":pt", units,
								":pm", rate),
						deadline)
					.thenApply((update) -> rejected);
			}
			boolean large = drained > Long.MAX_VALUE / 4 || stored > Long.MAX_VALUE / 4;
			if (exists && !large && !changed && level > 0) {
				// The stored level only ever grows, so once above what has drained it stays there: concurrent adds
				// fail only when the bucket is out of tokens, or the base or the units moved.
				return calls.update(pk, "ADD #x :need SET #t = :ttl",
						"#b = :base AND #x > :drained AND #x <= :most AND #p = :pt", NAMES,
						Map.of(":need", DynamoDbCalls.number(need), ":ttl", ttl, ":base", DynamoDbCalls.number(base),
								":drained", DynamoDbCalls.number(drained), ":most",
								DynamoDbCalls.number(capacity - need + drained), ":pt", units),
						deadline)
					.thenCompose((update) -> {
						if (!update.applied()) {
							return attempt(calls, policy, key, now, cost, deadline, attempt + 1);
						}
						long levelAfter = Math.max(0,
								DynamoDbCalls.number(update.attributes(), "level", stored + need) - drained);
						long left = Math.max(0, capacity - levelAfter);
						return done(Decision.allowed(burst, left / perToken, ceilDiv(levelAfter, perMilli),
								ceilDiv(perToken - left % perToken, perMilli)));
					});
			}
			CompletableFuture<DynamoDbCalls.Update> update;
			if (!exists) {
				update = calls.update(pk, "SET #x = :x, #b = :b, #t = :ttl, #p = :pt, #m = :pm",
						"attribute_not_exists(#x)", ALL_NAMES, Map.of(":x", DynamoDbCalls.number(need), ":b",
								DynamoDbCalls.number(t), ":ttl", ttl, ":pt", units, ":pm", rate),
						deadline);
			}
			else if (large || changed) {
				// Numbers grown large over a long life, or counted under another limit or burst: count from this
				// instant in this configuration's units (rare, so exact matching is fine).
				update = calls.update(pk, "SET #x = :x, #b = :b, #t = :ttl, #p = :pt, #m = :pm",
						"#b = :base AND #x = :stored", ALL_NAMES,
						Map.of(":x", DynamoDbCalls.number(level + need), ":b", DynamoDbCalls.number(t), ":ttl", ttl,
								":base", DynamoDbCalls.number(base), ":stored", DynamoDbCalls.number(stored), ":pt",
								units, ":pm", rate),
						deadline);
			}
			else {
				// Drained: the level restarts from this request's units. The base stays, so that concurrent adds
				// computed against it remain valid.
				update = calls.update(pk, "SET #x = :x, #t = :ttl", "#b = :base AND #x <= :drained AND #p = :pt",
						NAMES, Map.of(":x", DynamoDbCalls.number(drained + need), ":ttl", ttl, ":base",
								DynamoDbCalls.number(base), ":drained", DynamoDbCalls.number(drained), ":pt", units),
						deadline);
			}
			return update.thenCompose((written) -> {
				if (!written.applied()) {
					return attempt(calls, policy, key, now, cost, deadline, attempt + 1);
				}
				long left = capacity - (level + need);
				return done(Decision.allowed(burst, left / perToken, ceilDiv(level + need, perMilli),
						ceilDiv(perToken - left % perToken, perMilli)));
			});
		});
	}

	private static CompletableFuture<Decision> done(Decision decision) {
		return CompletableFuture.completedFuture(decision);
	}

	String itemToReset(RateLimitPolicy policy, String key) {
		return this.keys.bucket(policy, key);
	}

	private static long saturatingMultiply(long a, long b) {
		long high = Math.multiplyHigh(a, b);
		long product = a * b;
		return (high != 0 || product < 0) ? Long.MAX_VALUE : product;
	}

	private static long ceilDiv(long a, long b) {
		return (a <= 0) ? 0 : (a + b - 1) / b;
	}

}
