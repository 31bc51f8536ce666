package io.github.ratelimit.dynamodb;

import java.time.Duration;
import java.util.Map;

import io.github.ratelimit.store.RateLimitStoreException;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.awscore.AwsRequestOverrideConfiguration;
import software.amazon.awssdk.core.SdkPlugin;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.retries.DefaultRetryStrategy;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.ConditionalCheckFailedException;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.ProvisionedThroughputExceededException;
import software.amazon.awssdk.services.dynamodb.model.RequestLimitExceededException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ReturnValue;
import software.amazon.awssdk.services.dynamodb.model.ReturnValuesOnConditionCheckFailure;
import software.amazon.awssdk.services.dynamodb.model.ScanResponse;
import software.amazon.awssdk.services.dynamodb.model.ThrottlingException;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * The calls a decision makes, each within the decision's deadline and <b>never retried by the SDK</b>: an
 * {@code ADD} whose response was lost may have landed, and sending it again would count it twice. A failed call
 * fails the decision, which the limiter answers with the policy's failure mode.
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

	private final String table;

	private final Duration timeout;

	DynamoDbCalls(DynamoDbClient client, String table, Duration timeout) {
		this.client = client;
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
	Update update(String pk, String updateExpression, String condition, Map<String, String> names,
			Map<String, AttributeValue> values, long deadline) {
		UpdateItemRequest request = UpdateItemRequest.builder()
			.tableName(this.table)
			.key(Map.of(PARTITION_KEY, AttributeValue.fromS(pk)))
			.updateExpression(updateExpression)
			.conditionExpression(condition)
			.expressionAttributeNames(names)
			.expressionAttributeValues(values)
			.returnValues(ReturnValue.UPDATED_NEW)
			.returnValuesOnConditionCheckFailure(ReturnValuesOnConditionCheckFailure.ALL_OLD)
			.overrideConfiguration(override(deadline))
			.build();
		try {
			return new Update(true, this.client.updateItem(request).attributes());
		}
		catch (ConditionalCheckFailedException ex) {
			return new Update(false, ex.hasItem() ? ex.item() : null);
		}
		catch (SdkException ex) {
			throw failure(ex);
		}
	}

	/** Read an item with a strongly consistent read; an empty map when there is none. */
	Map<String, AttributeValue> get(String pk, long deadline) {
		GetItemRequest request = GetItemRequest.builder()
			.tableName(this.table)
			.key(Map.of(PARTITION_KEY, AttributeValue.fromS(pk)))
			.consistentRead(true)
			.overrideConfiguration(override(deadline))
			.build();
		try {
			return this.client.getItem(request).item();
		}
		catch (SdkException ex) {
			throw failure(ex);
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
