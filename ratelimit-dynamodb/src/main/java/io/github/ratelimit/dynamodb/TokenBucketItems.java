package io.github.ratelimit.dynamodb;

import java.util.Map;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.RateLimitStoreException;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * Token bucket (and leaky bucket, the same meter) in one item per key, in the exact integer units of
 * {@link RateLimitPolicy#unitsPerToken()}: {@code units} at the time {@code last}, refilled lazily by whoever reads
 * it ({@code min(units + (now - last)·R, B·T)}).
 * <p>
 * A decision reads the item (strongly consistent) and, if the request passes, writes conditionally on what it read:
 * <ul>
 * <li>while the bucket is below full, {@code ADD #units :-cost·T} on condition that {@code last} is unchanged and
 * {@code units} still covers the cost, so concurrent takers of one key do not conflict;
 * <li>a full bucket (or one idle for a window) is folded: {@code SET units, last} on condition that {@code last} is
 * unchanged and the bucket is still full (or unchanged);
 * <li>a new key is created on condition that it does not exist.
 * </ul>
 * A failed condition means another decision changed the item in between: read again, at most
 * {@value #MAX_ATTEMPTS} times. A rejection writes nothing (one read unit).
 */
final class TokenBucketItems {

	static final int MAX_ATTEMPTS = 8;

	private static final Map<String, String> NAMES = Map.of("#u", "units", "#l", "last", "#t", "ttl");

	private final DynamoDbCalls calls;

	private final ItemKeys keys;

	TokenBucketItems(DynamoDbCalls calls, ItemKeys keys) {
		this.calls = calls;
		this.keys = keys;
	}

	Decision decide(RateLimitPolicy policy, String key, long now, long cost) {
		long deadline = this.calls.deadline();
		String pk = this.keys.bucket(policy, key);
		long perToken = policy.unitsPerToken();
		long perMilli = policy.unitsPerMilli();
		long burst = policy.burst();
		long capacity = burst * perToken;
		long need = cost * perToken;
		for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			Map<String, AttributeValue> item = this.calls.get(pk, deadline);
			boolean exists = item.containsKey("units") && item.containsKey("last");
			long units = DynamoDbCalls.number(item, "units", capacity);
			long last = DynamoDbCalls.number(item, "last", now);
			long t = Math.max(now, last); // time never runs backwards for a key
			long elapsed = t - last;
			long refill = saturatingMultiply(elapsed, perMilli);
			boolean full = !exists || refill >= capacity - units;
			long available = full ? capacity : units + refill;
			long reset = ceilDiv(capacity - available, perMilli);
			if (cost > burst) {
				return Decision.rejected(burst, available / perToken, reset, Decision.NEVER);
			}
			if (available < need) {
				return Decision.rejected(burst, available / perToken, reset, ceilDiv(need - available, perMilli));
			}
			DynamoDbCalls.Update update;
			long after;
			if (!exists) {
				after = capacity - need;
				update = this.calls.update(pk, "SET #u = :u, #l = :l, #t = :ttl", "attribute_not_exists(#u)", NAMES,
						Map.of(":u", DynamoDbCalls.number(after), ":l", DynamoDbCalls.number(t), ":ttl",
								ttl(t, capacity - after, perMilli)),
						deadline);
			}
			else if (full) {
				after = capacity - need;
				// Still full if units + refill ≥ capacity, whatever takers did meanwhile.
				update = this.calls.update(pk, "SET #u = :u, #l = :l, #t = :ttl", "#l = :last AND #u >= :full",
						NAMES,
						Map.of(":u", DynamoDbCalls.number(after), ":l", DynamoDbCalls.number(t), ":ttl",
								ttl(t, capacity - after, perMilli), ":last", DynamoDbCalls.number(last), ":full",
								DynamoDbCalls.number(capacity - refill)),
						deadline);
			}
			else if (elapsed >= policy.windowMillis()) {
				// Fold the refill in now and then, so that the stored numbers stay small.
				after = available - need;
				update = this.calls.update(pk, "SET #u = :u, #l = :l, #t = :ttl", "#l = :last AND #u = :units",
						NAMES,
						Map.of(":u", DynamoDbCalls.number(after), ":l", DynamoDbCalls.number(t), ":ttl",
								ttl(t, capacity - after, perMilli), ":last", DynamoDbCalls.number(last), ":units",
								DynamoDbCalls.number(units)),
						deadline);
			}
			else {
				update = this.calls.update(pk, "ADD #u :take SET #t = :ttl", "#l = :last AND #u >= :least", NAMES,
						Map.of(":take", DynamoDbCalls.number(-need), ":ttl",
								ttl(t, capacity - (available - need), perMilli), ":last", DynamoDbCalls.number(last),
								":least", DynamoDbCalls.number(need - refill)),
						deadline);
				after = update.applied() ? DynamoDbCalls.number(update.attributes(), "units", units - need) + refill
						: 0;
			}
			if (update.applied()) {
				return Decision.allowed(burst, after / perToken, ceilDiv(capacity - after, perMilli));
			}
		}
		throw new RateLimitStoreException("DynamoDB item of key '" + key + "' of policy '" + policy.name()
				+ "' changed under " + MAX_ATTEMPTS + " attempts in a row");
	}

	String itemToReset(RateLimitPolicy policy, String key) {
		return this.keys.bucket(policy, key);
	}

	private static AttributeValue ttl(long t, long missing, long perMilli) {
		return DynamoDbCalls.ttl(t + ceilDiv(missing, perMilli));
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
