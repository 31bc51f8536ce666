package io.github.ratelimit.dynamodb;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import software.amazon.awssdk.core.SdkRequest;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.services.dynamodb.model.GetItemRequest;
import software.amazon.awssdk.services.dynamodb.model.UpdateItemRequest;

/**
 * Records every request a client sends (once per call, however many attempts), to count calls and check their form.
 */
public final class RecordedRequests implements ExecutionInterceptor {

	private final List<SdkRequest> requests = new CopyOnWriteArrayList<>();

	@Override
	public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes executionAttributes) {
		this.requests.add(context.request());
	}

	public List<SdkRequest> all() {
		return List.copyOf(this.requests);
	}

	public long updates() {
		return this.requests.stream().filter(UpdateItemRequest.class::isInstance).count();
	}

	/**
	 * Return the reads decisions made: not those of the reset generation ({@code <prefix>#resets}), which a store
	 * with a deny cache in front of it reads in the background once per poll interval, whatever its traffic.
	 */
	public long reads() {
		return this.requests.stream()
			.filter((request) -> request instanceof GetItemRequest read
					&& !read.key().get(DynamoDbCalls.PARTITION_KEY).s().endsWith("#resets"))
			.count();
	}

	public void clear() {
		this.requests.clear();
	}

}
