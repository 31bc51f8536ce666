package io.github.ratelimit.dynamodb;

import java.net.URI;
import java.util.UUID;

import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.dynamodb.DynamoDbAsyncClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClient;
import software.amazon.awssdk.services.dynamodb.DynamoDbClientBuilder;

/**
 * Clients and tables of a DynamoDB-API server for tests; shared with the auto-configuration's tests.
 */
public final class DynamoDbClients {

	private DynamoDbClients() {
	}

	/** Return a builder of a client of the given endpoint, with credentials a local server accepts. */
	public static DynamoDbClientBuilder builder(URI endpoint) {
		return DynamoDbClient.builder()
			.endpointOverride(endpoint)
			.region(Region.US_EAST_1)
			.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")));
	}

	public static DynamoDbClient client(URI endpoint) {
		return builder(endpoint).build();
	}

	/**
	 * Return an asynchronous client of the given endpoint, with credentials a local server accepts. Each connection
	 * serves one request: on a kept-alive connection to dynalite (Node.js), the SDK's Netty client sometimes writes a
	 * request just after a 400 answer (a failed condition) on a connection that then turns out closed, which the
	 * store, never retrying a decision, reports as a failure.
	 */
	public static DynamoDbAsyncClient asyncClient(URI endpoint) {
		return DynamoDbAsyncClient.builder()
			.overrideConfiguration((configuration) -> configuration.putHeader("Connection", "close"))
			.endpointOverride(endpoint)
			.region(Region.US_EAST_1)
			.credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create("test", "test")))
			.build();
	}

	/** Return a table name no other test uses. */
	public static String newTable() {
		return "rate-limits-" + UUID.randomUUID();
	}

}
