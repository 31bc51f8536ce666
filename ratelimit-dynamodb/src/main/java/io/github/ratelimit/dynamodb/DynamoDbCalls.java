package io.github.ratelimit.dynamodb;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.github.ratelimit.RateLimitPolicy;
import io.github.ratelimit.store.RateLimitStoreException;
import io.github.ratelimit.store.StoreKeys;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.SdkPlugin;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.ThrottlingException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemResponse;

/**
 * The calls a decision makes, each within the decision's deadline and <b>never retried by the SDK</b>: an
 * {@code ADD} whose response was lost may have landed, and sending it again would count it twice. A failed call
 * fails the decision, which the limiter answers with the policy's failure mode.
 * <p>
 * A decision is written once, as stages over these calls: on the blocking client each call has completed when it
 * returns, so the stages run on the caller's thread; on the asynchronous client no thread waits for DynamoDB.
 */
final class DynamoDbCalls {

	static final String PARTITION_KEY = "pk";

	/** A conditional update's outcome: the item's new attributes, or, when the condition failed, its old ones. */
	record Update(boolean applied, @Nullable Map<String, AttributeValue> attributes) {
	}

	/** Overrides the client's retry strategy, whatever the application configured, for one request. */
	private static final SdkPlugin NO_RETRIES = (config) -> config.overrideConfiguration(
			config.overrideConfiguration().toBuilder().retryStrategy(DefaultRetryStrategy.doNotRetry()).build());

	private final DynamoDbClient client;

	private final Function<UpdateItemRequest, CompletableFuture<UpdateItemResponse>> updateItem;

	private final Function<GetItemRequest, CompletableFuture<GetItemResponse>> getItem;

	private final String table;

	private final Duration timeout;

	/** Calls on the blocking client: each stage has completed when it is returned. */
	DynamoDbCalls(DynamoDbClient client, String table, Duration timeout) {
		this(client, (request) -> completed(client::updateItem, request),
				(request) -> completed(client::getItem, request), table, timeout);
	}

	/** Calls on the asynchronous client, with the blocking one for what is not on a request's path. */
	DynamoDbCalls(DynamoDbClient client, DynamoDbAsyncClient asyncClient, String table, Duration timeout) {
		this(client, asyncClient::updateItem, asyncClient::getItem, table, timeout);
	}

	private DynamoDbCalls(DynamoDbClient client,
			Function<UpdateItemRequest, CompletableFuture<UpdateItemResponse>> updateItem,
			Function<GetItemRequest, CompletableFuture<GetItemResponse>> getItem, String table, Duration timeout) {
		this.client = client;
		this.updateItem = updateItem;
		this.getItem = getItem;
		this.table = table;
		this.timeout = timeout;
	}

	String table() {
		return this.table;
	}

	/** Return the deadline of a decision that starts now, in {@link System#nanoTime()} terms. */
	long deadline() {
		return System.nanoTime() + this.timeout.toNanos();
	}

	/**
	 * Apply a conditional update, returning the updated attributes, or the old item when the condition failed and
	 * the server returned it ({@code ReturnValuesOnConditionCheckFailure}; servers that do not implement it return
	 * none).
	 */
	CompletableFuture<Update> update(String pk, String updateExpression, String condition, Map<String, String> names,
			Map<String, AttributeValue> values, long deadline) {
		return update(pk, updateExpression, condition, names, values, deadline, ReturnValue.UPDATED_NEW);
	}

	/** Apply a conditional update as {@link #update} does, returning the whole item as updated. */
	CompletableFuture<Update> updateReturningItem(String pk, String updateExpression, String condition,
			Map<String, String> names, Map<String, AttributeValue> values, long deadline) {
		return update(pk, updateExpression, condition, names, values, deadline, ReturnValue.ALL_NEW);
	}

	private CompletableFuture<Update> update(String pk, String updateExpression, String condition,
			Map<String, String> names, Map<String, AttributeValue> values, long deadline, ReturnValue returned) {
		UpdateItemRequest request;
		try {
			request = UpdateItemRequest.builder()
				.tableName(this.table)
				.key(Map.of(PARTITION_KEY, AttributeValue.fromS(pk)))
				.updateExpression(updateExpression)
				.conditionExpression(condition)
				.expressionAttributeNames(names)
				.expressionAttributeValues(values)
				.returnValues(returned)
				.returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
				.overrideConfiguration(override(deadline))
				.build();
		}
		catch (RateLimitStoreException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.updateItem.apply(request).handle((response, failure) -> {
			if (failure == null) {
				return new Update(true, response.attributes());
			}
			Throwable cause = unwrap(failure);
			if (cause instanceof ConditionalCheckFailedException ex) {
				return new Update(false, ex.hasItem() ? ex.item() : null);
			}
			throw failure(cause);
		});
	}

	/** A decision whose item changed under each of its attempts: it fails, into the policy's failure mode. */
	static <T> CompletableFuture<T> conflicted(RateLimitPolicy policy, String key, int attempts) {
		return CompletableFuture.failedFuture(new RateLimitStoreException("DynamoDB item of key '"
				+ StoreKeys.escape(key) + "' of policy '" + StoreKeys.escape(policy.name()) + "' changed under "
				+ attempts + " attempts in a row"));
	}

	/** Read an item with a strongly consistent read; an empty map when there is none. */
	CompletableFuture<Map<String, AttributeValue>> get(String pk, long deadline) {
		GetItemRequest request;
		try {
			request = GetItemRequest.builder()
				.tableName(this.table)
				.key(Map.of(PARTITION_KEY, AttributeValue.fromS(pk)))
				.consistentRead(true)
				.overrideConfiguration(override(deadline))
				.build();
		}
		catch (RateLimitStoreException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.getItem.apply(request).handle((response, failure) -> {
			if (failure != null) {
				throw failure(unwrap(failure));
			}
			return response.item();
		});
	}

	/**
	 * Return a stage that completes as the given one does, with the store's exception itself rather than a
	 * {@code CompletionException} around it: what the limiter expects of a store's stage.
	 */
	static <T> CompletionStage<T> unwrapped(CompletionStage<T> stage) {
		CompletableFuture<T> result = new CompletableFuture<>();
		stage.whenComplete((value, failure) -> {
			if (failure != null) {
				result.completeExceptionally(unwrap(failure));
			}
			else {
				result.complete(value);
			}
		});
		return result;
	}

	/** Wait for a stage of the blocking client (completed already), throwing what failed it. */
	static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (CompletionException ex) {
			Throwable cause = unwrap(ex);
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while (cause instanceof CompletionException && cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static <Q, R> CompletableFuture<R> completed(Function<Q, R> call, Q request) {
		try {
			return CompletableFuture.completedFuture(call.apply(request));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/** Delete items (at most 25), retried by nobody: a reset that fails says so. */
	void delete(Iterable<String> pks) {
		long deadline = deadline();
		try {
			for (String pk : pks) {
				this.client.deleteItem((request) -> request.tableName(this.table)
					.key(Map.of(PARTITION_KEY, AttributeValue.fromS(pk)))
					.overrideConfiguration(override(deadline)));
			}
		}
		catch (SdkException ex) {
			throw failure(ex);
		}
	}

	/** Delete every item whose key starts with the prefix, page by page of a {@code Scan}. */
	void deleteWithPrefix(String prefix) {
		try {
			Map<String, AttributeValue> start = null;
			do {
				Map<String, AttributeValue> from = start;
				ScanResponse page = this.client.scan((request) -> request.tableName(this.table)
					.filterExpression("begins_with(#pk, :prefix)")
					.expressionAttributeNames(Map.of("#pk", PARTITION_KEY))
					.expressionAttributeValues(Map.of(":prefix", AttributeValue.fromS(prefix)))
					.projectionExpression("#pk")
					.exclusiveStartKey(from));
				for (Map<String, AttributeValue> item : page.items()) {
					this.client.deleteItem((request) -> request.tableName(this.table)
						.key(Map.of(PARTITION_KEY, item.get(PARTITION_KEY))));
				}
				start = page.hasLastEvaluatedKey() && !page.lastEvaluatedKey().isEmpty() ? page.lastEvaluatedKey()
						: null;
			}
			while (start != null);
		}
		catch (SdkException ex) {
			throw failure(ex);
		}
	}

	private AwsRequestOverrideConfiguration override(long deadline) {
		long remaining = deadline - System.nanoTime();
		if (remaining <= 0) {
			throw new RateLimitStoreException("DynamoDB did not decide within " + this.timeout.toMillis() + "ms");
		}
		return AwsRequestOverrideConfiguration.builder()
			.apiCallTimeout(Duration.ofNanos(Math.max(remaining, 1_000_000)))
			.addPlugin(NO_RETRIES)
			.build();
	}

	/** What a failed call means for the decision: a store failure, or what was thrown as it was. */
	private RuntimeException failure(Throwable cause) {
		if (cause instanceof SdkException ex) {
			return failure(ex);
		}
		if (cause instanceof RuntimeException ex) {
			return ex;
		}
		return new RateLimitStoreException("DynamoDB failed: " + cause, cause);
	}

	RateLimitStoreException failure(SdkException ex) {
		if (ex instanceof ProvisionedThroughputExceededException || ex instanceof RequestLimitExceededException
				|| ex instanceof ThrottlingException) {
			return new RateLimitStoreException("DynamoDB throttled the decision (table '" + this.table
					+ "' is over its capacity, or one key over a partition's 1,000 writes per second): "
					+ ex.getMessage(), ex);
		}
		if (ex instanceof ApiCallTimeoutException || ex instanceof ApiCallAttemptTimeoutException) {
			return new RateLimitStoreException(
					"DynamoDB did not decide within " + this.timeout.toMillis() + "ms: " + ex.getMessage(), ex);
		}
		if (ex instanceof ResourceNotFoundException) {
			return new RateLimitStoreException("DynamoDB table '" + this.table
					+ "' does not exist: create it (partition key 'pk' of type S) or set "
					+ "ratelimit.dynamodb.create-table=true", ex);
		}
		if (ex instanceof SdkClientException) {
			return new RateLimitStoreException("DynamoDB cannot be reached: " + ex.getMessage(), ex);
		}
		return new RateLimitStoreException("DynamoDB failed: " + ex.getMessage(), ex);
	}

	static long number(@Nullable Map<String, AttributeValue> item, String name, long absent) {
		if (item == null) {
			return absent;
		}
		AttributeValue value = item.get(name);
		return (value != null && value.n() != null) ? Long.parseLong(value.n()) : absent;
	}

	static AttributeValue number(long value) {
		return AttributeValue.fromN(Long.toString(value));
	}

	/** Return the TTL attribute's value for state that means nothing after {@code expiresAtMillis}: epoch seconds. */
	static AttributeValue ttl(long expiresAtMillis) {
		// A minute of slack for clocks that run behind; TTL deletes only days later anyway, it never decides.
		return number(Math.floorDiv(expiresAtMillis, 1000) + 61);
	}

}
