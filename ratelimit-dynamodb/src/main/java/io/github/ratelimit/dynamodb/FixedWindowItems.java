package io.github.ratelimit.dynamodb;

import java.util.List;
import java.util.Map;

import io.github.ratelimit.Decision;
import io.github.ratelimit.RateLimitPolicy;

/**
 * The seed's fixed window: one item per key and window ({@code pk} ends with the window's start), one
 * {@code UpdateItem} per decision: {@code ADD #count :cost SET #ttl = :ttl} with {@code count} and {@code ttl}
 * aliased (both are reserved words), {@code ReturnValues=UPDATED_NEW}, the decision from the returned count.
 * <p>
 * Unlike the seed's, the update is conditional ({@code #count <= :limit - :cost}), so that a rejected request takes
 * nothing and the count never exceeds the limit: a rejection is the failed condition, still one call (and still one
 * write unit: DynamoDB bills failed conditional writes). Its remaining units come from the item DynamoDB returns
 * with the failure; a server that does not return it (dynalite) needs a read only for requests that cost more than
 * one, since a failed cost-1 request means the count is at the limit.
 */
final class FixedWindowItems {

	private static final Map<String, String> NAMES = Map.of("#c", "count", "#t", "ttl");

	private final DynamoDbCalls calls;

	private final ItemKeys keys;

	FixedWindowItems(DynamoDbCalls calls, ItemKeys keys) {
		this.calls = calls;
		this.keys = keys;
	}

	Decision decide(RateLimitPolicy policy, String key, long now, long cost) {
		long deadline = this.calls.deadline();
		long limit = policy.limit();
		long window = policy.windowMillis();
		long start = now - Math.floorMod(now, window);
		long reset = start + window - now;
		String pk = this.keys.window(policy, key, start);
		if (cost > limit) {
			long count = DynamoDbCalls.number(this.calls.get(pk, deadline), "count", 0);
			return Decision.rejected(limit, Math.max(0, limit - count), reset, Decision.NEVER, reset);
		}
		DynamoDbCalls.Update update = this.calls.update(pk, "ADD #c :cost SET #t = :ttl",
				"attribute_not_exists(#c) OR #c <= :room", NAMES,
				Map.of(":cost", DynamoDbCalls.number(cost), ":ttl", DynamoDbCalls.ttl(start + window), ":room",
						DynamoDbCalls.number(limit - cost)),
				deadline);
		if (update.applied()) {
			long count = DynamoDbCalls.number(update.attributes(), "count", cost);
			return Decision.allowed(limit, Math.max(0, limit - count), reset, reset);
		}
		long count;
		if (update.attributes() != null) {
			count = DynamoDbCalls.number(update.attributes(), "count", 0);
		}
		else if (cost == 1) {
			count = limit;
		}
		else {
			count = DynamoDbCalls.number(this.calls.get(pk, deadline), "count", 0);
		}
		return Decision.rejected(limit, Math.max(0, limit - count), reset, reset, reset);
	}

	/** Return the items a reset deletes: the window of {@code now} and its neighbours, for clocks a window apart. */
	List<String> itemsToReset(RateLimitPolicy policy, String key, long now) {
		long window = policy.windowMillis();
		long start = now - Math.floorMod(now, window);
		return List.of(this.keys.window(policy, key, start - window), this.keys.window(policy, key, start),
				this.keys.window(policy, key, start + window));
	}

}
