package io.github.ratelimit.dynamodb;

/**
 * The whole conformance suite against dynalite, through the store's non-blocking methods on the SDK's asynchronous
 * client.
 */
class DynamoDbRateLimitStoreNonBlockingConformanceTests extends DynamoDbRateLimitStoreConformanceTests {

	@Override
	protected boolean nonBlocking() {
		return true;
	}

	/** A third of the long runs: a connection per request (see DynamoDbClients) makes each request slower. */
	@Override
	protected double longRunShare() {
		return 1.0 / 3;
	}

}
