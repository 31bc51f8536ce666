package io.github.ratelimit.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Explains {@code ratelimit.store=dynamodb} without DynamoDB.
 */
class DynamoDbStoreUnavailableFailureAnalyzer
		extends AbstractFailureAnalyzer<RateLimitStoreConfigurations.DynamoDbStoreUnavailableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure,
			RateLimitStoreConfigurations.DynamoDbStoreUnavailableException cause) {
		return new FailureAnalysis(cause.getMessage() + ".",
				"Add software.amazon.awssdk:dynamodb (ratelimit-dynamodb comes with the starter), set "
						+ "ratelimit.dynamodb.region (and ratelimit.dynamodb.endpoint for a local server) or define a "
						+ "DynamoDbClient bean, or set ratelimit.store to 'memory' or 'auto'.",
				cause);
	}

}
