package io.github.ratelimit.autoconfigure;

import java.net.URI;
import java.time.Duration;

import io.github.ratelimit.dynamodb.DynamoDbRateLimitStore;
import org.jspecify.annotations.Nullable;

/**
 * Settings of the DynamoDB store ({@code ratelimit.dynamodb}), used with {@code ratelimit.store=dynamodb}.
 */
public class DynamoDbStoreProperties {

	/**
	 * Region of the DynamoDB client the starter builds when the application has no DynamoDbClient bean. When not
	 * set, the SDK's default region chain (AWS_REGION, profile, instance metadata).
	 */
	private @Nullable String region;

	/**
	 * Endpoint of that client, to reach a local DynamoDB-API server (for instance http://127.0.0.1:8000). When
	 * not set, the region's DynamoDB endpoint.
	 */
	private @Nullable URI endpoint;

	/**
	 * Table of the counters; its partition key is 'pk', of type S.
	 */
	private String table = DynamoDbRateLimitStore.DEFAULT_TABLE;

	/**
	 * Whether to create the table at start-up if it is missing (on-demand capacity, TTL on 'ttl' where the
	 * server implements it). Off by default: tables are usually created by infrastructure code.
	 */
	private boolean createTable;

	/**
	 * Prefix of every partition key the store writes, so that applications can share a table. Must not contain
	 * ':'.
	 */
	private String keyPrefix = DynamoDbRateLimitStore.DEFAULT_KEY_PREFIX;

	/**
	 * How long a decision may take, all its calls included, before the failure mode applies. Calls are never
	 * retried by the SDK (a retried ADD could count twice).
	 */
	private Duration timeout = Duration.ofMillis(DynamoDbRateLimitStore.DEFAULT_TIMEOUT_MILLIS);

	public @Nullable String getRegion() {
		return this.region;
	}

	public void setRegion(@Nullable String region) {
		this.region = region;
	}

	public @Nullable URI getEndpoint() {
		return this.endpoint;
	}

	public void setEndpoint(@Nullable URI endpoint) {
		this.endpoint = endpoint;
	}

	public String getTable() {
		return this.table;
	}

	public void setTable(String table) {
		this.table = table;
	}

	public boolean isCreateTable() {
		return this.createTable;
	}

	public void setCreateTable(boolean createTable) {
		this.createTable = createTable;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

}
