package io.github.ratelimit.grpc;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.ratelimit.annotation.RateLimited;
import io.github.ratelimit.engine.InvalidRateLimitPolicyException;
import io.github.ratelimit.engine.RateLimitedMethods;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerMethodDefinition;
import io.grpc.stub.StreamObserver;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@code @RateLimited} methods of the application's gRPC services, by the full name of the gRPC method each
 * implements ({@code orders.OrderService/PlaceOrder}): the Java method a generated base class names after it
 * ({@code placeOrder}), taking the request and a response observer, or only the observer for a client that streams.
 */
final class GrpcServiceMethods {

	/** A rate limited gRPC method: the Java method that implements it, and whether the call carries one message. */
	record Target(Method method, Class<?> targetClass, boolean clientSendsOneMessage) {

		/** The arguments that key expressions see: the message and no observer, or no observer. */
		Object[] arguments(@Nullable Object message) {
			return this.clientSendsOneMessage ? new Object[] { message, null } : new Object[] { null };
		}

	}

	private final Map<String, Target> targets;

	private GrpcServiceMethods(Map<String, Target> targets) {
		this.targets = targets;
	}

	/**
	 * Find the rate limited methods of services.
	 * @throws InvalidRateLimitPolicyException if a service's {@code @RateLimited} method implements no gRPC method
	 */
	static GrpcServiceMethods of(List<BindableService> services) {
		Map<String, Target> targets = new HashMap<>();
		for (BindableService service : services) {
			Class<?> type = AopUtils.getTargetClass(service);
			if (!RateLimitedMethods.isCandidate(type)) {
				continue;
			}
			Set<Method> implemented = new HashSet<>();
			for (ServerMethodDefinition<?, ?> definition : service.bindService().getMethods()) {
				MethodDescriptor<?, ?> descriptor = definition.getMethodDescriptor();
				Method method = implementation(type, descriptor);
				if (method != null) {
					implemented.add(method);
					if (!RateLimitedMethods.annotationsOf(method, type).isEmpty()) {
						targets.put(descriptor.getFullMethodName(),
								new Target(method, type, descriptor.getType().clientSendsOneMessage()));
					}
				}
			}
			checkEveryLimitApplies(type, implemented);
		}
		return new GrpcServiceMethods(Map.copyOf(targets));
	}

	/**
	 * Return the rate limited method a call invokes.
	 * @param fullMethodName the call's method, {@code package.Service/Method}
	 * @return the target, or {@code null} if the method is not rate limited
	 */
	@Nullable Target find(String fullMethodName) {
		return this.targets.get(fullMethodName);
	}

	boolean isEmpty() {
		return this.targets.isEmpty();
	}

	private static @Nullable Method implementation(Class<?> type, MethodDescriptor<?, ?> descriptor) {
		String bareName = descriptor.getBareMethodName();
		if (bareName == null) {
			return null;
		}
		String name = javaName(bareName);
		boolean oneMessage = descriptor.getType().clientSendsOneMessage();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
			Class<?>[] parameters = method.getParameterTypes();
			boolean shaped = oneMessage
					? parameters.length == 2 && parameters[1] == StreamObserver.class
							&& method.getReturnType() == void.class
					: parameters.length == 1 && parameters[0] == StreamObserver.class
							&& method.getReturnType() == StreamObserver.class;
			if (shaped && method.getName().equals(name) && !Modifier.isStatic(method.getModifiers())) {
				return method;
			}
		}
		return null;
	}

	/** The Java name protoc-gen-grpc-java gives a method: {@code SayHello} and {@code say_hello} are sayHello. */
	static String javaName(String protoName) {
		StringBuilder name = new StringBuilder(protoName.length());
		boolean upper = false;
		for (int i = 0; i < protoName.length(); i++) {
			char c = protoName.charAt(i);
			if (c == '_') {
				upper = true;
			}
			else {
				name.append((name.length() == 0) ? Character.toLowerCase(c) : upper ? Character.toUpperCase(c) : c);
				upper = false;
			}
		}
		return name.toString();
	}

	/**
	 * An annotated method that implements no gRPC method would limit nothing, and a cost known after the response
	 * would never be known: mistakes to say at start-up.
	 */
	private static void checkEveryLimitApplies(Class<?> type, Set<Method> implemented) {
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(type, ReflectionUtils.USER_DECLARED_METHODS)) {
			List<RateLimited> annotations = RateLimitedMethods.annotationsOf(method, type);
			if (!implemented.contains(method) && !annotations.isEmpty() && !Modifier.isStatic(method.getModifiers())) {
				throw new InvalidRateLimitPolicyException(annotations.get(0).name(), "@RateLimited on "
						+ type.getSimpleName() + "#" + method.getName() + " limits nothing: gRPC calls reach a "
						+ "service's methods that implement its gRPC methods (as a generated base class names them), "
						+ "and this method implements none. Annotate the method that implements the call, or move "
						+ "this one to another bean.");
			}
			for (RateLimited annotation : annotations) {
				if (!annotation.settle().isEmpty()) {
					throw new InvalidRateLimitPolicyException(annotation.name(), "@RateLimited on "
							+ type.getSimpleName() + "#" + method.getName() + " has 'settle', which a gRPC method "
							+ "cannot use: its result is a stream of messages and it has no status to report a cost "
							+ "to. Give the call its cost up front with 'cost' over its message.");
				}
			}
		}
	}

}
