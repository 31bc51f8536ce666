package io.github.ratelimit.dynamodb;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.model.AttributeDefinition;
import software.amazon.awssdk.services.dynamodb.model.BillingMode;
import software.amazon.awssdk.services.dynamodb.model.DynamoDbException;
import software.amazon.awssdk.services.dynamodb.model.KeySchemaElement;
import software.amazon.awssdk.services.dynamodb.model.KeyType;
import software.amazon.awssdk.services.dynamodb.model.ResourceInUseException;
import software.amazon.awssdk.services.dynamodb.model.ResourceNotFoundException;
import software.amazon.awssdk.services.dynamodb.model.ScalarAttributeType;
import software.amazon.awssdk.services.dynamodb.model.TableDescription;
import software.amazon.awssdk.services.dynamodb.model.TableStatus;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveDescription;
import software.amazon.awssdk.services.dynamodb.model.TimeToLiveStatus;

/**
 * Checks the table at start-up, and creates it when asked: partition key {@code pk} (S), on-demand capacity, TTL on
 * {@code ttl}. A server that does not implement {@code UpdateTimeToLive} (dynalite) keeps the table without TTL:
 * TTL only cleans up, it never decides.
 */
final class TableSetup {

	private static final Logger logger = LoggerFactory.getLogger(DynamoDbRateLimitStore.class);

	private static final Duration ACTIVE_TIMEOUT = Duration.ofSeconds(60);

	private final DynamoDbClient client;

	private final String table;

	TableSetup(DynamoDbClient client, String table) {
		this.client = client;
		this.table = table;
	}

	/**
	 * Check that the table exists with the key the store writes, creating it if allowed. An unreachable DynamoDB is
	 * not a start-up failure (decisions follow the failure mode until it answers); a missing table that may not be
	 * created, or one with another key, is.
	 */
	void ensureTable(boolean create) {
		try {
			checkKey(this.client.describeTable((request) -> request.tableName(this.table)).table());
			checkTimeToLive();
		}
		catch (ResourceNotFoundException ex) {
			if (!create) {
				throw new IllegalStateException("DynamoDB table '" + this.table + "' does not exist: create it "
						+ "(partition key 'pk' of type S, TTL on the attribute 'ttl') or set "
						+ "ratelimit.dynamodb.create-table=true", ex);
			}
			createTable();
		}
		catch (SdkClientException ex) {
			logger.warn("DynamoDB cannot be reached to check table '{}' ({}); decisions follow the failure mode "
					+ "until it answers", this.table, ex.getMessage());
		}
	}

	private void checkKey(TableDescription description) {
		boolean ours = description.keySchema().size() == 1
				&& description.keySchema().get(0).attributeName().equals(DynamoDbCalls.PARTITION_KEY)
				&& description.attributeDefinitions()
					.stream()
					.anyMatch((definition) -> definition.attributeName().equals(DynamoDbCalls.PARTITION_KEY)
							&& definition.attributeType() == ScalarAttributeType.S);
		if (!ours) {
			throw new IllegalStateException("DynamoDB table '" + this.table + "' has the key schema "
					+ description.keySchema() + ", but the rate limiter needs a partition key 'pk' of type S and no "
					+ "sort key: use another table (ratelimit.dynamodb.table)");
		}
	}

	private void checkTimeToLive() {
		try {
			TimeToLiveDescription ttl = this.client
				.describeTimeToLive((request) -> request.tableName(this.table))
				.timeToLiveDescription();
			boolean enabled = ttl != null && "ttl".equals(ttl.attributeName())
					&& (ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLED
							|| ttl.timeToLiveStatus() == TimeToLiveStatus.ENABLING);
			if (!enabled) {
				logger.warn("TTL is not enabled on the attribute 'ttl' of DynamoDB table '{}': expired counters stay "
						+ "until deleted (they never count again: the window is in the key)", this.table);
			}
		}
		catch (DynamoDbException ex) {
			logger.debug("TTL of DynamoDB table '{}' could not be read", this.table, ex);
		}
	}

	private void createTable() {
		try {
			this.client.createTable((request) -> request.tableName(this.table)
				.keySchema(KeySchemaElement.builder()
					.attributeName(DynamoDbCalls.PARTITION_KEY)
					.keyType(KeyType.HASH)
					.build())
				.attributeDefinitions(AttributeDefinition.builder()
					.attributeName(DynamoDbCalls.PARTITION_KEY)
					.attributeType(ScalarAttributeType.S)
					.build())
				.billingMode(BillingMode.PAY_PER_REQUEST));
			logger.info("Created DynamoDB table '{}' for rate limits", this.table);
		}
		catch (ResourceInUseException ex) {
			// Another instance created it first.
		}
		awaitActive();
		try {
			this.client.updateTimeToLive((request) -> request.tableName(this.table)
				.timeToLiveSpecification((ttl) -> ttl.attributeName("ttl").enabled(true)));
		}
		catch (DynamoDbException ex) {
			logger.warn("TTL could not be enabled on DynamoDB table '{}' ({}); expired counters stay until "
					+ "deleted (they never count again: the window is in the key)", this.table, ex.getMessage());
		}
	}

	private void awaitActive() {
		long deadline = System.nanoTime() + ACTIVE_TIMEOUT.toNanos();
		while (true) {
			TableStatus status = this.client.describeTable((request) -> request.tableName(this.table))
				.table()
				.tableStatus();
			if (status == TableStatus.ACTIVE) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("DynamoDB table '" + this.table + "' is still " + status + " after "
						+ ACTIVE_TIMEOUT.toSeconds() + "s");
			}
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for table '" + this.table + "'", ex);
			}
		}
	}

}
