package io.github.ratelimit.dynamodb;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

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

	private final ItemKeys keys;

	FixedWindowItems(ItemKeys keys) {
		this.keys = keys;
	}

	CompletableFuture<Decision> decide(DynamoDbCalls calls, RateLimitPolicy policy, String key, long now, long cost) {
		long deadline = calls.deadline();
		long limit = policy.limit();
		long window = policy.windowMillis();
		long start = now - Math.floorMod(now, window);
		long reset = start + window - now;
		String pk = this.keys.window(policy, key, start);
		if (cost > limit) {
			return calls.get(pk, deadline).thenApply((item) -> Decision.rejected(limit,
					Math.max(0, limit - DynamoDbCalls.number(item, "count", 0)), reset, Decision.NEVER, reset));
		}
		return calls.update(pk, "ADD #c :cost SET #t = :ttl", "attribute_not_exists(#c) OR #c <= :room", NAMES,
				Map.of(":cost", DynamoDbCalls.number(cost), ":ttl", AlgorithmItems.ttl(policy, start + window), ":room",
						DynamoDbCalls.number(limit - cost)),
				deadline)
			.thenCompose((update) -> {
				if (update.applied()) {
					long count = DynamoDbCalls.number(update.attributes(), "count", cost);
					return CompletableFuture.completedFuture(
							Decision.allowed(limit, Math.max(0, limit - count), reset, reset));
				}
				if (update.attributes() != null || cost == 1) {
					long count = (update.attributes() != null)
							? DynamoDbCalls.number(update.attributes(), "count", 0) : limit;
					return CompletableFuture.completedFuture(rejected(limit, count, reset));
				}
				return calls.get(pk, deadline)
					.thenApply((item) -> rejected(limit, DynamoDbCalls.number(item, "count", 0), reset));
			});
	}

	private static Decision rejected(long limit, long count, long reset) {
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
