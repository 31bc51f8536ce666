package io.github.ratelimit.aop;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.List;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.core.annotation.MergedAnnotation;
import org.springframework.core.annotation.MergedAnnotations;
import org.springframework.core.annotation.MergedAnnotations.SearchStrategy;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * Which methods are rate limited, and by which annotations: the one rule shared by the pointcut and the registry.
 * <ul>
 * <li>{@code @RateLimited} on a method (directly, repeated, or through a composed annotation) applies to it.
 * <li>Otherwise {@code @RateLimited} on its class applies to it if it is, in a controller, a handler method
 * ({@code @RequestMapping} or a shortcut such as {@code @GetMapping}), or else a public method.
 * </ul>
 */
final class RateLimitedMethods {

	private RateLimitedMethods() {
	}

	static List<RateLimited> annotationsOf(Method method, Class<?> targetClass) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		Method specific = ClassUtils.getMostSpecificMethod(method, userClass);
		if (specific.getDeclaringClass() == Object.class || specific.isBridge() || specific.isSynthetic()
				|| Modifier.isStatic(specific.getModifiers())) {
			return List.of();
		}
		List<RateLimited> onMethod = find(MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY));
		if (!onMethod.isEmpty()) {
			return onMethod;
		}
		if (Modifier.isPrivate(specific.getModifiers())) {
			return List.of();
		}
		MergedAnnotations classAnnotations = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY);
		List<RateLimited> onClass = find(classAnnotations);
		if (onClass.isEmpty()) {
			return List.of();
		}
		boolean applies = classAnnotations.isPresent(Controller.class)
				? MergedAnnotations.from(specific, SearchStrategy.TYPE_HIERARCHY).isPresent(RequestMapping.class)
				: Modifier.isPublic(specific.getModifiers());
		return applies ? onClass : List.of();
	}

	/**
	 * Fail for a {@code @RateLimited} method that calls cannot be intercepted on: static or private, or final where
	 * the proxy is a subclass. Such a method would silently never be limited.
	 * @throws InvalidRateLimitPolicyException naming the method and why
	 */
	static void checkInterceptable(Class<?> targetClass, boolean subclassProxy) {
		Class<?> userClass = ClassUtils.getUserClass(targetClass);
		boolean onClass = MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class);
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (method.getDeclaringClass() == Object.class || method.isBridge() || method.isSynthetic()) {
				continue;
			}
			int modifiers = method.getModifiers();
			boolean onMethod = MergedAnnotations.from(method, SearchStrategy.DIRECT).isPresent(RateLimited.class);
			String why = null;
			if (onMethod && (Modifier.isStatic(modifiers) || Modifier.isPrivate(modifiers))) {
				why = Modifier.isStatic(modifiers) ? "static" : "private";
			}
			else if (subclassProxy && Modifier.isFinal(modifiers) && !Modifier.isStatic(modifiers)
					&& (onMethod || (onClass && !annotationsOf(method, userClass).isEmpty()))) {
				why = "final";
			}
			if (why != null) {
				List<RateLimited> annotations = find(MergedAnnotations.from(method, SearchStrategy.DIRECT));
				String name = (!annotations.isEmpty() && !annotations.get(0).name().isBlank())
						? annotations.get(0).name().trim() : userClass.getSimpleName() + "." + method.getName();
				throw new InvalidRateLimitPolicyException(name, "@RateLimited on "
						+ RateLimitedMethodRegistry.describe(userClass, method) + ": the method is " + why
						+ ", so calls to it never pass through the proxy that limits them; make it a non-" + why
						+ " method of the bean, called from outside it");
			}
		}
	}

	/**
	 * Return whether the class, or one of its methods, carries {@code @RateLimited}.
	 */
	static boolean hasRateLimitedMethods(Class<?> userClass) {
		if (!isCandidate(userClass)) {
			return false;
		}
		if (MergedAnnotations.from(userClass, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
			return true;
		}
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(userClass)) {
			if (MergedAnnotations.from(method, SearchStrategy.TYPE_HIERARCHY).isPresent(RateLimited.class)) {
				return true;
			}
		}
		return false;
	}

	static boolean isCandidate(Class<?> type) {
		return org.springframework.core.annotation.AnnotationUtils.isCandidateClass(type, RateLimited.class);
	}

	private static List<RateLimited> find(MergedAnnotations annotations) {
		return annotations.stream(RateLimited.class).map(MergedAnnotation::synthesize).toList();
	}

}
